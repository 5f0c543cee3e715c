package dav

import (
	"encoding/base64"

	"shoal"
)

// Want-Digest and Digest (RFC 3230): which checksums a client asks for,
// and the header value that answers it from a file's sums.

// Digest algorithms md can answer (RFC 3230, RFC 5843 names).
const (
	algAdler32 = iota + 1
	algMD5
	algSHA256
)

var algNames = [...]string{algAdler32: "adler32", algMD5: "md5", algSHA256: "sha-256"}

// WantDigest is a parsed Want-Digest header: the algorithms md knows, best
// first. It lives on the stack: the stat path must not allocate.
type WantDigest struct {
	n    int
	alg  [4]uint8
	qval [4]int // q × 1000
}

// ParseWantDigest parses "adler32;q=0.5, MD5, UNIXsum;q=0.1": names are
// case-insensitive, q defaults to 1, q=0 means "not acceptable", unknown
// algorithms are ignored, and the result is ordered by q, ties keeping the
// client's order. A malformed q-value counts as 1 (be lenient with what a
// checksum request says; the worst outcome is an extra digest).
func ParseWantDigest(h []byte) WantDigest {
	var w WantDigest
	for len(h) > 0 {
		var name, params []byte
		name, params, h = nextListItem(h)
		alg := algByName(TrimSpace(name))
		if alg == 0 {
			continue
		}
		q := parseQ(params)
		if q == 0 {
			continue
		}
		dup := false
		for i := 0; i < w.n; i++ {
			if w.alg[i] == alg {
				dup = true
			}
		}
		if dup || w.n == len(w.alg) {
			continue
		}
		// insertion sort, stable: after every entry with q ≥ this one
		j := w.n
		for j > 0 && w.qval[j-1] < q {
			w.alg[j], w.qval[j] = w.alg[j-1], w.qval[j-1]
			j--
		}
		w.alg[j], w.qval[j] = alg, q
		w.n++
	}
	return w
}

func algByName(b []byte) uint8 {
	switch {
	case EqualFold(b, "adler32"):
		return algAdler32
	case EqualFold(b, "md5"):
		return algMD5
	case EqualFold(b, "sha-256"), EqualFold(b, "sha256"):
		return algSHA256
	}
	return 0
}

// parseQ reads "q=0.5" out of ";"-separated parameters, in thousandths.
func parseQ(params []byte) int {
	for len(params) > 0 {
		var p []byte
		if i := indexByte(params, ';'); i >= 0 {
			p, params = params[:i], params[i+1:]
		} else {
			p, params = params, nil
		}
		p = TrimSpace(p)
		if len(p) < 2 || (p[0] != 'q' && p[0] != 'Q') || p[1] != '=' {
			continue
		}
		v := p[2:]
		if len(v) == 0 || (v[0] != '0' && v[0] != '1') {
			return 1000
		}
		q := int(v[0]-'0') * 1000
		if len(v) > 1 {
			if v[1] != '.' {
				return 1000
			}
			scale := 100
			for _, c := range v[2:] {
				if c < '0' || c > '9' || scale == 0 {
					return 1000
				}
				q += int(c-'0') * scale
				scale /= 10
			}
		}
		if q > 1000 {
			q = 1000
		}
		return q
	}
	return 1000
}

// AppendDigest appends the Digest header value for the wanted algorithms
// that sums has, best first; it returns b unchanged if there is none.
func AppendDigest(b []byte, w *WantDigest, sums *shoal.Sums) []byte {
	start := len(b)
	for i := 0; i < w.n; i++ {
		switch w.alg[i] {
		case algAdler32:
			b = appendSep(b, start)
			b = append(b, "adler32="...)
			b = appendHex8(b, sums.Adler32)
		case algMD5:
			if len(sums.MD5) != 16 {
				continue
			}
			b = appendSep(b, start)
			b = append(b, "md5="...)
			b = base64.StdEncoding.AppendEncode(b, sums.MD5)
		case algSHA256:
			if len(sums.SHA256) != 32 {
				continue
			}
			b = appendSep(b, start)
			b = append(b, "sha-256="...)
			b = base64.StdEncoding.AppendEncode(b, sums.SHA256)
		}
	}
	return b
}

func appendSep(b []byte, start int) []byte {
	if len(b) > start {
		b = append(b, ',')
	}
	return b
}

// appendHex8 appends v as 8 lower-case hex digits (the WLCG adler32 form).
func appendHex8(b []byte, v uint32) []byte {
	const digits = "0123456789abcdef"
	for shift := 28; shift >= 0; shift -= 4 {
		b = append(b, digits[(v>>uint(shift))&15])
	}
	return b
}
