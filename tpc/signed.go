package tpc

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"strconv"
	"strings"

	"shoal"
)

// md sends a third-party COPY to the data server or gw that does the work
// with a signed URL (sign.Keys.URLAs, wire.GatewayURLAs) whose "method"
// is SignedMethod: the mode, a hash of the remote URL, the size and, for
// a push, the file's checksums. The data server rebuilds it from the
// headers the client sends again after the 307 and from the URL's
// ParamSize and ParamSums, so a signature made for one copy cannot start
// another: not another remote, mode, size or file.

// Query parameters of a TPC URL, besides the signature's.
const (
	ParamSize = "tpc_size" // pull: the bytes md reserved (-1: unknown); push: the file's size
	ParamSums = "tpc_sums" // push: the file's checksums as the catalog keeps them (FormatSums)
)

// SignedMethod is what the signature of a TPC URL covers in place of an
// HTTP method.
func SignedMethod(mode Mode, remote *url.URL, size int64, sums string) string {
	h := sha256.Sum256([]byte(remote.String()))
	return "COPY " + mode.String() + " " + hex.EncodeToString(h[:16]) + " " + strconv.FormatInt(size, 10) + " " + sums
}

// Query is the query string md appends to a signed TPC URL.
func Query(size int64, sums string) string {
	q := ParamSize + "=" + strconv.FormatInt(size, 10)
	if sums != "" {
		q += "&" + ParamSums + "=" + url.QueryEscape(sums)
	}
	return q
}

// FormatSums is the ParamSums form of a file's checksums: adler32 in
// hex, then md5 in hex when known.
func FormatSums(s shoal.Sums) string {
	a := strconv.FormatUint(uint64(s.Adler32), 16)
	a = strings.Repeat("0", 8-len(a)) + a
	if len(s.MD5) == 16 {
		return a + ":" + hex.EncodeToString(s.MD5)
	}
	return a
}

// ParseSums reads FormatSums' form (already covered by a signature).
func ParseSums(v string) (shoal.Sums, bool) {
	a, m, _ := strings.Cut(v, ":")
	n, err := strconv.ParseUint(a, 16, 32)
	if err != nil || len(a) != 8 {
		return shoal.Sums{}, false
	}
	s := shoal.Sums{Adler32: uint32(n)}
	if m != "" {
		b, err := hex.DecodeString(m)
		if err != nil || len(b) != 16 {
			return shoal.Sums{}, false
		}
		s.MD5 = b
	}
	return s, true
}

// Limit is the most a pull may write: the server's own limit, and what
// md reserved (ParamSize) when it knew the source's size.
func Limit(max, reserved int64) int64 {
	if reserved >= 0 {
		return min(max, reserved)
	}
	return max
}
