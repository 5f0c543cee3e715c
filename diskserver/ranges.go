package diskserver

import (
	"strconv"
	"strings"
)

// maxRanges bounds the ranges of one request; a Range header with more is
// ignored (RFC 7233 §3.1 lets a server ignore Range), which also defuses
// the "many tiny overlapping ranges" attack.
const maxRanges = 64

// byteRange is an inclusive-exclusive span [start, end) of an object.
type byteRange struct{ start, end int64 }

func (r byteRange) length() int64 { return r.end - r.start }

// contentRange is the Content-Range value of r in an object of size.
func (r byteRange) contentRange(size int64) string {
	return "bytes " + strconv.FormatInt(r.start, 10) + "-" + strconv.FormatInt(r.end-1, 10) + "/" + strconv.FormatInt(size, 10)
}

// parseRange interprets a Range header against an object of size bytes
// (RFC 7233 §2.1). It returns the satisfiable ranges in request order;
// ignore when the header is absent, malformed, not in bytes or has too
// many ranges (the whole object is served, 200); unsatisfiable when it is
// well-formed but no range overlaps the object (416).
func parseRange(h string, size int64) (rs []byteRange, ignore, unsatisfiable bool) {
	h = strings.TrimSpace(h)
	unit, set, ok := strings.Cut(h, "=")
	if h == "" || !ok || !strings.EqualFold(strings.TrimSpace(unit), "bytes") {
		return nil, true, false
	}
	specs := strings.Split(set, ",")
	if len(specs) > maxRanges {
		return nil, true, false
	}
	seen := 0
	for _, spec := range specs {
		spec = strings.TrimSpace(spec)
		if spec == "" {
			continue // RFC 7230 §7: empty list elements are allowed
		}
		seen++
		first, last, ok := strings.Cut(spec, "-")
		if !ok {
			return nil, true, false
		}
		if first == "" { // suffix: the last N bytes
			n, err := strconv.ParseInt(last, 10, 64)
			if err != nil || n < 0 || last[0] == '+' {
				return nil, true, false
			}
			if n == 0 || size == 0 {
				continue
			}
			rs = append(rs, byteRange{max(size-n, 0), size})
			continue
		}
		start, err := strconv.ParseInt(first, 10, 64)
		if err != nil || start < 0 || first[0] == '+' {
			return nil, true, false
		}
		end := size // exclusive
		if last != "" {
			l, err := strconv.ParseInt(last, 10, 64)
			if err != nil || l < start || last[0] == '+' {
				return nil, true, false
			}
			if l < size-1 {
				end = l + 1
			}
		}
		if start >= size {
			continue
		}
		rs = append(rs, byteRange{start, end})
	}
	if seen == 0 {
		return nil, true, false
	}
	if len(rs) == 0 {
		return nil, false, true
	}
	return rs, false, false
}
