package md

import "unsafe"

// b2s views b as a string without copying, for lookups and comparisons
// that do not keep the string.
func b2s(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
