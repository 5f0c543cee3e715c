package dav

import (
	"encoding/xml"
	"unicode/utf8"
)

// A hand-written multistatus writer: PROPFIND Depth 0 is on the stat path,
// and appending to a pooled buffer costs a fraction of encoding/xml.
// Only DAV: gets a document-wide prefix ("D"); other namespaces are
// declared on the element that uses them.

// The frame of a multistatus document: its responses go in between.
const (
	xmlHeader        = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
	MultistatusOpen  = xmlHeader + "<D:multistatus xmlns:D=\"DAV:\">"
	MultistatusClose = "</D:multistatus>\n"
)

// ContentTypeXML is the Content-Type of every XML answer.
var ContentTypeXML = []byte("application/xml; charset=utf-8")

// FiniteDepthBody is the body of the 403 a PROPFIND of Depth infinity
// gets: the DAV:propfind-finite-depth precondition (RFC 4918 9.1).
var FiniteDepthBody = []byte(xmlHeader + "<D:error xmlns:D=\"DAV:\"><D:propfind-finite-depth/></D:error>\n")

// appendEscaped appends s escaped for XML text, or for a double-quoted
// attribute value when attr is set. Bytes that are not valid UTF-8 and
// characters XML 1.0 does not allow (C0 controls, U+FFFE, U+FFFF) become
// U+FFFD, so that a name stored by an older version, before such names were
// refused, cannot make a listing ill-formed.
func appendEscaped(b []byte, s string, attr bool) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 || r == 0xfffe || r == 0xffff {
				b = append(b, "\uFFFD"...)
			} else {
				b = append(b, s[i:i+size]...)
			}
			i += size - 1
			continue
		}
		switch c {
		case '&':
			b = append(b, "&amp;"...)
		case '<':
			b = append(b, "&lt;"...)
		case '>':
			b = append(b, "&gt;"...)
		case '"':
			if attr {
				b = append(b, "&quot;"...)
			} else {
				b = append(b, c)
			}
		case '\r':
			b = append(b, "&#xD;"...)
		case '\t', '\n':
			if attr {
				b = append(b, "&#x"...)
				b = append(b, "0123456789ABCDEF"[c])
				b = append(b, ';')
			} else {
				b = append(b, c)
			}
		default:
			if c < 0x20 {
				b = append(b, "\uFFFD"...)
			} else {
				b = append(b, c)
			}
		}
	}
	return b
}

// appendOpen appends the start tag of a property element; close must be
// appended with appendClose with the same name.
func appendOpen(b []byte, n xml.Name, empty bool) []byte {
	b = append(b, '<')
	switch n.Space {
	case nsDAV:
		b = append(b, "D:"...)
		b = append(b, n.Local...)
	case "":
		b = append(b, n.Local...)
	default:
		b = append(b, "X:"...)
		b = append(b, n.Local...)
		b = append(b, " xmlns:X=\""...)
		b = appendEscaped(b, n.Space, true)
		b = append(b, '"')
	}
	if empty {
		return append(b, "/>"...)
	}
	return append(b, '>')
}

func appendClose(b []byte, n xml.Name) []byte {
	b = append(b, "</"...)
	switch n.Space {
	case nsDAV:
		b = append(b, "D:"...)
	case "":
	default:
		b = append(b, "X:"...)
	}
	b = append(b, n.Local...)
	return append(b, '>')
}

// appendHref appends <D:href> for a clean path; collections end in '/'.
func appendHref(b []byte, path string, dir bool) []byte {
	b = append(b, "<D:href>"...)
	b = appendEscapedPath(b, path)
	if dir && path != "/" {
		b = append(b, '/')
	}
	return append(b, "</D:href>"...)
}

// appendEscapedPath is shoal.EscapePath without the allocation.
func appendEscapedPath(b []byte, p string) []byte {
	const hexd = "0123456789ABCDEF"
	for i := 0; i < len(p); i++ {
		c := p[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			c == '/' || c == '-' || c == '_' || c == '.' || c == '~' {
			b = append(b, c)
		} else {
			b = append(b, '%', hexd[c>>4], hexd[c&15])
		}
	}
	return b
}

// statusLine is the text of a <D:status> element.
func statusLine(code int) string {
	switch code {
	case 200:
		return "HTTP/1.1 200 OK"
	case 403:
		return "HTTP/1.1 403 Forbidden"
	case 404:
		return "HTTP/1.1 404 Not Found"
	case 409:
		return "HTTP/1.1 409 Conflict"
	case 424:
		return "HTTP/1.1 424 Failed Dependency"
	case 507:
		return "HTTP/1.1 507 Insufficient Storage"
	default:
		return "HTTP/1.1 500 Internal Server Error"
	}
}

func appendPropstatOpen(b []byte) []byte {
	return append(b, "<D:propstat><D:prop>"...)
}

func appendPropstatClose(b []byte, code int) []byte {
	b = append(b, "</D:prop><D:status>"...)
	b = append(b, statusLine(code)...)
	return append(b, "</D:status></D:propstat>"...)
}
