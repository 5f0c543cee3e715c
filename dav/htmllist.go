package dav

import (
	"unicode/utf8"

	"shoal"
)

// The HTML directory listing that browsers get for a GET of a
// collection, written a row at a time so that it can stream.

// AppendHTMLListHead appends the page's head, its title and the link to
// the parent (for every collection but the root).
func AppendHTMLListHead(b []byte, dir string) []byte {
	b = append(b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>"...)
	b = AppendHTMLText(b, dir)
	b = append(b, "</title></head><body><h1>"...)
	b = AppendHTMLText(b, dir)
	b = append(b, "</h1><ul>\n"...)
	if dir != "/" {
		parent := shoal.ParentPath(dir)
		b = append(b, "<li><a href=\""...)
		b = appendEscapedPath(b, parent)
		if parent != "/" {
			b = append(b, '/')
		}
		b = append(b, "\">../</a></li>\n"...)
	}
	return b
}

// AppendHTMLListRow appends the row of one child: a link to its path
// (percent-escaped, so it needs no HTML escaping), collections with a
// trailing slash.
func AppendHTMLListRow(b []byte, e *shoal.Entry) []byte {
	b = append(b, "<li><a href=\""...)
	b = appendEscapedPath(b, e.Path)
	if e.IsDir {
		b = append(b, '/')
	}
	b = append(b, "\">"...)
	b = AppendHTMLText(b, e.Name())
	if e.IsDir {
		b = append(b, '/')
	}
	return append(b, "</a></li>\n"...)
}

// HTMLListTail ends the page.
const HTMLListTail = "</ul></body></html>\n"

// AppendHTMLText appends s escaped for HTML text or a quoted attribute
// (as html.EscapeString), bytes that are not UTF-8 (a name stored before
// such names were refused) replaced by U+FFFD.
func AppendHTMLText(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
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
			b = append(b, "&#34;"...)
		case '\'':
			b = append(b, "&#39;"...)
		default:
			b = append(b, c)
		}
	}
	return b
}
