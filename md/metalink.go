package md

import (
	"bytes"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/dav"
	"shoal/internal/httperr"
)

// Metalink (dav.AppendMetalink) for clients that fail over by
// themselves: md's redirects also name the other replicas in Link:
// rel=duplicate headers and the Metalink in a Link: rel=describedby
// header.

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
	return len(h) > 0 && bytes.Contains(h, metalinkSubstr) && dav.AcceptsMetalink(h)
}

// serveMetalink answers GET or HEAD of a file stored on data servers with
// its Metalink document.
func (s *Server) serveMetalink(ctx *fasthttp.RequestCtx, e *shoal.Entry) {
	targets, err := s.readTargets(s.base, e, urlTagOf(ctx))
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	urls := make([]string, len(targets))
	for i, t := range targets {
		urls[i] = t.url
	}
	buf := getBuf()
	buf.b = dav.AppendMetalink(buf.b[:0], e, urls)
	h := &ctx.Response.Header
	h.SetContentType(dav.ContentTypeMetalink)
	// The signed URLs expire (md.url_ttl): no cache may keep them.
	h.Set(fasthttp.HeaderCacheControl, "no-store")
	h.Set(fasthttp.HeaderVary, "Accept")
	ctx.SetBody(buf.b) // copies
	putBuf(buf)
	ctx.Response.SkipBody = ctx.IsHead()
}

// addFailoverLinks adds to a redirect the other replicas' URLs as
// Link: <…>; rel=duplicate; pri=N (RFC 6249) and the file's Metalink as
// Link: <path>; rel=describedby; type="application/metalink4+xml".
func addFailoverLinks(ctx *fasthttp.RequestCtx, e *shoal.Entry, targets []readTarget) {
	h := &ctx.Response.Header
	buf := getBuf()
	for i, t := range targets[1:min(len(targets), maxDuplicateLinks+1)] {
		buf.b = dav.AppendDuplicateLink(buf.b[:0], t.url, i+2)
		h.AddBytesKV(hdrLink, buf.b)
	}
	buf.b = dav.AppendDescribedByLink(buf.b[:0], e.Path)
	h.AddBytesKV(hdrLink, buf.b)
	putBuf(buf)
}
