package dav

import (
	"strings"
	"unsafe"
)

// Byte helpers for header values, without allocating.

// TrimSpace trims spaces and tabs (HTTP's OWS) from both ends of b.
func TrimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// EqualFold compares b with the lower-case ASCII string s, ignoring ASCII
// case only (a Unicode fold would take the Kelvin sign for a k).
func EqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

func indexByte(b []byte, c byte) int {
	for i := range b {
		if b[i] == c {
			return i
		}
	}
	return -1
}

func indexString(b []byte, s string) int {
	return strings.Index(b2s(b), s)
}

// b2s views b as a string without copying, for lookups and comparisons
// that do not keep the string.
func b2s(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// nextListItem splits the first item off a comma-separated header list
// (Accept, Want-Digest): its value before any ';', its parameters after,
// and the rest of the list.
func nextListItem(h []byte) (value, params, rest []byte) {
	item := h
	if i := indexByte(h, ','); i >= 0 {
		item, rest = h[:i], h[i+1:]
	}
	value = item
	if i := indexByte(item, ';'); i >= 0 {
		value, params = item[:i], item[i+1:]
	}
	return value, params, rest
}
