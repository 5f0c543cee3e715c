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
