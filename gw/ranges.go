package gw

import (
	"strconv"
	"strings"
)

// parseSingleRange interprets a Range header with one byte range against
// an object of size bytes (RFC 7233 §2.1) and returns [start, end). ok is
// false when the header is to be ignored (malformed, not bytes, several
// ranges): the whole object is served. unsatisfiable: well-formed but
// outside the object (416).
func parseSingleRange(h string, size int64) (start, end int64, ok, unsatisfiable bool) {
	unit, spec, found := strings.Cut(strings.TrimSpace(h), "=")
	if !found || !strings.EqualFold(strings.TrimSpace(unit), "bytes") || strings.Contains(spec, ",") {
		return 0, 0, false, false
	}
	first, last, found := strings.Cut(strings.TrimSpace(spec), "-")
	if !found {
		return 0, 0, false, false
	}
	num := func(s string) (int64, bool) {
		if s == "" || s[0] < '0' || s[0] > '9' {
			return 0, false
		}
		v, err := strconv.ParseInt(s, 10, 64)
		return v, err == nil
	}
	if first == "" { // the last N bytes
		n, good := num(last)
		if !good {
			return 0, 0, false, false
		}
		if n == 0 || size == 0 {
			return 0, 0, false, true
		}
		return max(size-n, 0), size, true, false
	}
	s, good := num(first)
	if !good {
		return 0, 0, false, false
	}
	e := size
	if last != "" {
		l, good := num(last)
		if !good || l < s {
			return 0, 0, false, false
		}
		e = min(l+1, size)
	}
	if s >= size {
		return 0, 0, false, true
	}
	return s, e, true, false
}
