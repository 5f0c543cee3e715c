package md

import (
	"bytes"
	"encoding/hex"
	"strconv"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/internal/httperr"
)

// Metalink (RFC 5854) and Metalink/HTTP (RFC 6249): how clients fail over
// by themselves, the way grid clients do. A client that asks for a file
// with Accept: application/metalink4+xml gets a Metalink document listing
// a signed URL of every live replica (for an erasure-coded file, of every
// live gw), best first, with the file's size and checksums; davix asks for
// it (first with a HEAD, then a GET, both to md's URL) when a transfer
// fails, and tries the URLs in order. md's redirects also name the other
// replicas in Link: rel=duplicate headers and the Metalink in a Link:
// rel=describedby header.

const ctMetalink = "application/metalink4+xml"

var (
	hdrAccept      = []byte("Accept")
	hdrLink        = []byte("Link")
	metalinkSubstr = []byte("metalink4")
)

// maxDuplicateLinks bounds the Link headers of a redirect: with many gws an
// erasure-coded file would otherwise get a long header block.
const maxDuplicateLinks = 4

// wantsMetalink reports whether the request asks for a Metalink.
func wantsMetalink(ctx *fasthttp.RequestCtx) bool {
	h := ctx.Request.Header.PeekBytes(hdrAccept)
	return len(h) > 0 && bytes.Contains(h, metalinkSubstr) && acceptsMetalink(h)
}

// acceptsMetalink parses an Accept header (RFC 9110 §12.5.1) and reports
// whether it lists application/metalink4+xml with a q-value above 0.
// Wildcards do not count: a browser's */* wants the file, not a Metalink.
func acceptsMetalink(h []byte) bool {
	for len(h) > 0 {
		var item []byte
		if i := indexByte(h, ','); i >= 0 {
			item, h = h[:i], h[i+1:]
		} else {
			item, h = h, nil
		}
		typ, params := item, []byte(nil)
		if i := indexByte(item, ';'); i >= 0 {
			typ, params = item[:i], item[i+1:]
		}
		if asciiEqualFold(trimSpace(typ), ctMetalink) && parseQ(params) > 0 {
			return true
		}
	}
	return false
}

// asciiEqualFold compares b with the lower-case ASCII s, ignoring ASCII
// case only (a Unicode fold would take the Kelvin sign for a k).
func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// serveMetalink answers GET or HEAD of a file stored on data servers with
// its Metalink document.
func (s *Server) serveMetalink(ctx *fasthttp.RequestCtx, e *shoal.Entry) {
	targets, err := s.readTargets(s.base, e, urlTagOf(ctx))
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	buf := getBuf()
	buf.b = appendMetalink(buf.b[:0], e, targets)
	h := &ctx.Response.Header
	h.SetContentType(ctMetalink)
	// The signed URLs expire (md.url_ttl): no cache may keep them.
	h.Set(fasthttp.HeaderCacheControl, "no-store")
	h.Set(fasthttp.HeaderVary, "Accept")
	ctx.SetBody(buf.b) // copies
	putBuf(buf)
	ctx.Response.SkipBody = ctx.IsHead()
}

// appendMetalink appends e's Metalink 4 document. The checksums follow the
// URLs: davix's parser takes the character data of every element it does
// not know into the next one it does, so a hash before a url would garble
// the URL for it.
func appendMetalink(b []byte, e *shoal.Entry, targets []readTarget) []byte {
	b = append(b, xmlHeader...)
	b = append(b, "<metalink xmlns=\"urn:ietf:params:xml:ns:metalink\">\n<file name=\""...)
	b = appendEscaped(b, e.Name(), true)
	b = append(b, "\">\n<size>"...)
	b = strconv.AppendInt(b, e.Size, 10)
	b = append(b, "</size>\n"...)
	for i, t := range targets {
		b = append(b, "<url priority=\""...)
		b = strconv.AppendInt(b, int64(i+1), 10)
		b = append(b, "\">"...)
		b = appendEscaped(b, t.url, false)
		b = append(b, "</url>\n"...)
	}
	b = append(b, "<hash type=\"adler32\">"...)
	b = appendHex32(b, e.Sums.Adler32)
	b = append(b, "</hash>\n"...)
	if len(e.Sums.MD5) == 16 {
		b = append(b, "<hash type=\"md5\">"...)
		b = hex.AppendEncode(b, e.Sums.MD5)
		b = append(b, "</hash>\n"...)
	}
	if len(e.Sums.SHA256) == 32 {
		b = append(b, "<hash type=\"sha-256\">"...)
		b = hex.AppendEncode(b, e.Sums.SHA256)
		b = append(b, "</hash>\n"...)
	}
	return append(b, "</file>\n</metalink>\n"...)
}

func appendHex32(b []byte, v uint32) []byte {
	const hexd = "0123456789abcdef"
	for shift := 28; shift >= 0; shift -= 4 {
		b = append(b, hexd[(v>>uint(shift))&0xf])
	}
	return b
}

// addFailoverLinks adds to a redirect the other replicas' URLs as
// Link: <…>; rel=duplicate; pri=N (RFC 6249) and the file's Metalink as
// Link: <path>; rel=describedby; type="application/metalink4+xml".
func addFailoverLinks(ctx *fasthttp.RequestCtx, e *shoal.Entry, targets []readTarget) {
	h := &ctx.Response.Header
	buf := getBuf()
	for i, t := range targets[1:min(len(targets), maxDuplicateLinks+1)] {
		buf.b = append(buf.b[:0], '<')
		buf.b = append(buf.b, t.url...)
		buf.b = append(buf.b, ">; rel=duplicate; pri="...)
		buf.b = strconv.AppendInt(buf.b, int64(i+2), 10)
		h.AddBytesKV(hdrLink, buf.b)
	}
	buf.b = append(buf.b[:0], '<')
	buf.b = append(buf.b, shoal.EscapePath(e.Path)...)
	buf.b = append(buf.b, ">; rel=describedby; type=\""+ctMetalink+"\""...)
	h.AddBytesKV(hdrLink, buf.b)
	putBuf(buf)
}
