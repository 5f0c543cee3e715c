// Package httprange reads RFC 7233 Range headers and writes the answers
// every shoal HTTP server gives them (md for inline files, diskserver, gw),
// so that a client sees one behaviour whichever server it reaches:
//
//   - no header, another unit, or more than MaxRanges ranges: the header is
//     ignored and the whole body served (200), as RFC 7233 §3.1 allows;
//   - a malformed bytes range: KindInvalid (400) with a short reason;
//   - well-formed but no range overlaps the body: KindBadRange (416), sent
//     with Content-Range "bytes */SIZE" (Unsatisfied);
//   - otherwise the satisfiable ranges (206, one part or
//     multipart/byteranges), in request order — unless some overlap or
//     touch, then merged and in ascending order (RFC 9110 §14.2 lets a
//     server coalesce); and when the parts would cost more than about
//     twice the body (MaxAmplification), the header is ignored and the
//     whole body served, so that no Range header makes a server send many
//     times an object.
//
// The functions are pure (no HTTP server types) so that they can be
// table-tested and fuzzed.
//
// It imports only the root package.
package httprange

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"shoal"
)

// MaxRanges bounds the ranges of one request; a Range header with more list
// elements is ignored, which also defuses the "many tiny overlapping
// ranges" attack.
const MaxRanges = 64

// A multipart answer may carry at most 2×size + amplificationSlack bytes
// (partOverhead per part for its boundary and headers, estimated);
// beyond, the whole body (200) is the cheaper answer.
const (
	partOverhead       = 128
	amplificationSlack = 1024
)

// Range is the span [Start, End) of a body.
type Range struct{ Start, End int64 }

// Length is the number of bytes in r.
func (r Range) Length() int64 { return r.End - r.Start }

// Parse interprets a Range header against a body of size bytes. It returns
// the satisfiable ranges; nil ranges and a nil error mean "ignore the
// header, serve the whole body". A malformed bytes range is KindInvalid,
// an unsatisfiable one KindBadRange.
func Parse(header string, size int64) ([]Range, error) {
	const op = "Range"
	h := strings.TrimSpace(header)
	if h == "" {
		return nil, nil
	}
	unit, set, hasSet := strings.Cut(h, "=")
	if !strings.EqualFold(strings.TrimSpace(unit), "bytes") {
		return nil, nil // another unit (RFC 7233 §3.1: ignore)
	}
	if !hasSet {
		return nil, shoal.Errorf(op, shoal.KindInvalid, "malformed Range: no range set")
	}
	if strings.Count(set, ",") >= MaxRanges {
		return nil, nil
	}
	var rs []Range
	seen := 0
	for spec := range strings.SplitSeq(set, ",") {
		spec = strings.TrimSpace(spec)
		if spec == "" {
			continue // RFC 7230 §7: empty list elements are allowed
		}
		seen++
		first, last, ok := strings.Cut(spec, "-")
		if !ok {
			return nil, shoal.Errorf(op, shoal.KindInvalid, "malformed Range: %q has no '-'", clip(spec))
		}
		first, last = strings.TrimSpace(first), strings.TrimSpace(last)
		if first == "" { // suffix: the last n bytes
			n, ok := parseUint(last)
			if !ok {
				return nil, shoal.Errorf(op, shoal.KindInvalid, "malformed Range: bad suffix length in %q", clip(spec))
			}
			if n > 0 && size > 0 {
				rs = append(rs, Range{size - min(n, size), size})
			}
			continue
		}
		start, ok := parseUint(first)
		if !ok {
			return nil, shoal.Errorf(op, shoal.KindInvalid, "malformed Range: bad first byte in %q", clip(spec))
		}
		end := size // exclusive
		if last != "" {
			l, ok := parseUint(last)
			if !ok || l < start {
				return nil, shoal.Errorf(op, shoal.KindInvalid, "malformed Range: bad last byte in %q", clip(spec))
			}
			if l < size-1 {
				end = l + 1
			}
		}
		if start < size {
			rs = append(rs, Range{start, end})
		}
	}
	if seen == 0 {
		return nil, shoal.Errorf(op, shoal.KindInvalid, "malformed Range: no range")
	}
	if len(rs) == 0 {
		return nil, shoal.Errorf(op, shoal.KindBadRange, "no range overlaps the %d bytes", size)
	}
	if len(rs) == 1 {
		return rs, nil
	}
	rs = coalesce(rs)
	var cost int64
	for _, r := range rs {
		cost += r.Length() + partOverhead
	}
	if len(rs) > 1 && cost > 2*size+amplificationSlack {
		return nil, nil
	}
	return rs, nil
}

// coalesce merges ranges that overlap or touch, returning them sorted; rs
// is returned as it is when none do (the client's order kept).
func coalesce(rs []Range) []Range {
	sorted := slices.Clone(rs)
	slices.SortFunc(sorted, func(a, b Range) int { return cmp.Compare(a.Start, b.Start) })
	merged := sorted[:1]
	for _, r := range sorted[1:] {
		last := &merged[len(merged)-1]
		if r.Start <= last.End {
			last.End = max(last.End, r.End)
			continue
		}
		merged = append(merged, r)
	}
	if len(merged) == len(rs) {
		return rs
	}
	return merged
}

// parseUint reads a run of ASCII digits (no sign, no space). A value past
// int64 saturates at its maximum: it is still a valid position, just
// beyond any body.
func parseUint(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	var v int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		d := int64(c - '0')
		if v > (1<<63-1-d)/10 {
			v = 1<<63 - 1
			continue
		}
		v = v*10 + d
	}
	return v, true
}

// clip shortens a client's text quoted in a reason.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// AppendContentRange appends the Content-Range value of r in a body of
// size bytes: "bytes FIRST-LAST/SIZE".
func AppendContentRange(b []byte, r Range, size int64) []byte {
	b = append(b, "bytes "...)
	b = strconv.AppendInt(b, r.Start, 10)
	b = append(b, '-')
	b = strconv.AppendInt(b, r.End-1, 10)
	b = append(b, '/')
	return strconv.AppendInt(b, size, 10)
}

// ContentRange is AppendContentRange as a string.
func ContentRange(r Range, size int64) string {
	return string(AppendContentRange(make([]byte, 0, 48), r, size))
}

// AppendUnsatisfied appends the Content-Range value of a 416 answer for a
// body of size bytes: "bytes */SIZE".
func AppendUnsatisfied(b []byte, size int64) []byte {
	return strconv.AppendInt(append(b, "bytes */"...), size, 10)
}

// Unsatisfied is AppendUnsatisfied as a string.
func Unsatisfied(size int64) string { return "bytes */" + strconv.FormatInt(size, 10) }
