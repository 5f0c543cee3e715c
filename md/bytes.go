package md

import (
	"strings"
	"unsafe"
)

// Byte helpers for request paths and header values, without allocating.

// b2s views b as a string without copying, for lookups and comparisons
// that do not keep the string.
func b2s(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

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

// trimSpace trims spaces and tabs (HTTP's OWS) from both ends of b.
func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// equalFold compares b with the lower-case ASCII string s, ignoring case.
func equalFold(b []byte, s string) bool {
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
