package md

import "shoal"

// byteRange is one satisfiable range [start, end] (inclusive).
type byteRange struct{ start, end int64 }

// parseRange reads a Range header for a file of size bytes, for the bytes
// md serves itself (inline files). ok=false means "send the whole file":
// no header, another unit (RFC 7233 says ignore), or several ranges (a
// server may ignore a Range; the data server does multipart, md does not).
// A malformed bytes range is KindInvalid (400); a syntactically valid but
// unsatisfiable one KindBadRange (416).
func parseRange(h []byte, size int64) (r byteRange, ok bool, err error) {
	const op = "Range"
	if len(h) == 0 {
		return r, false, nil
	}
	if len(h) < 6 || !equalFold(h[:6], "bytes=") {
		return r, false, nil
	}
	spec := trimSpace(h[6:])
	if indexByte(spec, ',') >= 0 {
		return r, false, nil
	}
	dash := indexByte(spec, '-')
	if dash < 0 {
		return r, false, shoal.Errorf(op, shoal.KindInvalid, "malformed Range")
	}
	first, last := trimSpace(spec[:dash]), trimSpace(spec[dash+1:])
	a, aok := parseUint(first)
	b, bok := parseUint(last)
	switch {
	case len(first) == 0 && bok: // suffix: last b bytes
		if b == 0 {
			return r, false, shoal.Errorf(op, shoal.KindBadRange, "empty suffix range")
		}
		if b > size {
			b = size
		}
		r = byteRange{size - b, size - 1}
	case aok && len(last) == 0:
		r = byteRange{a, size - 1}
	case aok && bok:
		if b < a {
			return r, false, shoal.Errorf(op, shoal.KindInvalid, "malformed Range: last byte before first")
		}
		if b >= size {
			b = size - 1
		}
		r = byteRange{a, b}
	default:
		return r, false, shoal.Errorf(op, shoal.KindInvalid, "malformed Range")
	}
	if size == 0 || r.start >= size || r.start > r.end {
		return r, false, shoal.Errorf(op, shoal.KindBadRange, "range not satisfiable")
	}
	return r, true, nil
}

func parseUint(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, true
}

// appendContentRange appends "bytes start-end/size".
func appendContentRange(b []byte, r byteRange, size int64) []byte {
	b = append(b, "bytes "...)
	b = appendInt(b, r.start)
	b = append(b, '-')
	b = appendInt(b, r.end)
	b = append(b, '/')
	return appendInt(b, size)
}

func appendInt(b []byte, v int64) []byte {
	if v < 0 {
		b = append(b, '-')
		v = -v
	}
	var tmp [20]byte
	i := len(tmp)
	for {
		i--
		tmp[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	return append(b, tmp[i:]...)
}
