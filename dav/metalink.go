package dav

import (
	"encoding/hex"
	"strconv"

	"shoal"
)

// Metalink (RFC 5854) and Metalink/HTTP (RFC 6249): how clients fail over
// by themselves, the way grid clients do. A client that asks for a file
// with Accept: application/metalink4+xml gets a Metalink document listing
// a signed URL of every live replica (for an erasure-coded file, of every
// live gw), best first, with the file's size and checksums; davix asks for
// it (first with a HEAD, then a GET, both to md's URL) when a transfer
// fails, and tries the URLs in order.

// ContentTypeMetalink is the media type of a Metalink 4 document.
const ContentTypeMetalink = "application/metalink4+xml"

// AcceptsMetalink parses an Accept header (RFC 9110 §12.5.1) and reports
// whether it lists application/metalink4+xml with a q-value above 0.
// Wildcards do not count: a browser's */* wants the file, not a Metalink.
func AcceptsMetalink(h []byte) bool {
	for len(h) > 0 {
		var typ, params []byte
		typ, params, h = nextListItem(h)
		if EqualFold(TrimSpace(typ), ContentTypeMetalink) && parseQ(params) > 0 {
			return true
		}
	}
	return false
}

// AppendMetalink appends e's Metalink 4 document listing urls, best
// first. The checksums follow the URLs: davix's parser takes the
// character data of every element it does not know into the next one it
// does, so a hash before a url would garble the URL for it.
func AppendMetalink(b []byte, e *shoal.Entry, urls []string) []byte {
	b = append(b, xmlHeader...)
	b = append(b, "<metalink xmlns=\"urn:ietf:params:xml:ns:metalink\">\n<file name=\""...)
	b = appendEscaped(b, e.Name(), true)
	b = append(b, "\">\n<size>"...)
	b = strconv.AppendInt(b, e.Size, 10)
	b = append(b, "</size>\n"...)
	for i, u := range urls {
		b = append(b, "<url priority=\""...)
		b = strconv.AppendInt(b, int64(i+1), 10)
		b = append(b, "\">"...)
		b = appendEscaped(b, u, false)
		b = append(b, "</url>\n"...)
	}
	b = append(b, "<hash type=\"adler32\">"...)
	b = appendHex8(b, e.Sums.Adler32)
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

// AppendDuplicateLink appends the value of a Link header naming another
// replica's url with priority pri (RFC 6249 rel=duplicate).
func AppendDuplicateLink(b []byte, url string, pri int) []byte {
	b = append(b, '<')
	b = append(b, url...)
	b = append(b, ">; rel=duplicate; pri="...)
	return strconv.AppendInt(b, int64(pri), 10)
}

// AppendDescribedByLink appends the value of a Link header naming the
// Metalink of the file at path (RFC 6249 rel=describedby).
func AppendDescribedByLink(b []byte, path string) []byte {
	b = append(b, '<')
	b = append(b, shoal.EscapePath(path)...)
	return append(b, ">; rel=describedby; type=\""+ContentTypeMetalink+"\""...)
}
