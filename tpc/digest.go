package tpc

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"shoal"
)

// Digest is what a peer's Digest header (RFC 3230) says of a file, in
// the algorithms shoal keeps: adler32 (the WLCG default) and md5.
type Digest struct {
	Adler32    uint32
	MD5        []byte // 16 bytes when HasMD5
	HasAdler32 bool
	HasMD5     bool
}

// Any reports whether the digest holds an algorithm shoal can compare.
func (d Digest) Any() bool { return d.HasAdler32 || d.HasMD5 }

// WantDigest is the Want-Digest shoal sends for a Digest it can compare.
const WantDigest = "adler32, md5"

// ParseDigest reads "adler32=0a1b2c3d, md5=HUXZLQLMuI/KZ5KDcJPcOA==, …":
// names case-insensitive; adler32 in hex (up to 8 digits); md5 in base64
// (RFC 3230) or, as some servers send it, 32 hex digits. Other
// algorithms are ignored; a malformed value of a known one is an error
// (a peer that lies in form may lie in content).
func ParseDigest(h string) (Digest, error) {
	var d Digest
	for item := range strings.SplitSeq(h, ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok {
			continue
		}
		name, val = strings.TrimSpace(name), strings.TrimSpace(val)
		switch {
		case strings.EqualFold(name, "adler32"):
			if len(val) == 0 || len(val) > 8 {
				return Digest{}, fmt.Errorf("Digest: bad adler32 %q", clip(val))
			}
			v, err := strconv.ParseUint(val, 16, 32)
			if err != nil {
				return Digest{}, fmt.Errorf("Digest: bad adler32 %q", clip(val))
			}
			d.Adler32, d.HasAdler32 = uint32(v), true
		case strings.EqualFold(name, "md5"):
			var b []byte
			var err error
			if len(val) == 32 {
				b, err = hex.DecodeString(val)
			} else {
				b, err = base64.StdEncoding.DecodeString(val)
			}
			if err != nil || len(b) != 16 {
				return Digest{}, fmt.Errorf("Digest: bad md5 %q", clip(val))
			}
			d.MD5, d.HasMD5 = b, true
		}
	}
	return d, nil
}

// Mismatch compares the digest with sums (what shoal computed or keeps):
// "" when every algorithm both hold agrees, else a line naming the first
// that does not.
func (d Digest) Mismatch(s shoal.Sums) string {
	if d.HasAdler32 && d.Adler32 != s.Adler32 {
		return fmt.Sprintf("adler32 mismatch: the other side has %08x, this side %08x", d.Adler32, s.Adler32)
	}
	if d.HasMD5 && len(s.MD5) == 16 && !bytes.Equal(d.MD5, s.MD5) {
		return fmt.Sprintf("md5 mismatch: the other side has %x, this side %x", d.MD5, s.MD5)
	}
	return ""
}

// comparable reports whether d and s share an algorithm.
func (d Digest) comparable(s shoal.Sums) bool {
	return d.HasAdler32 || d.HasMD5 && len(s.MD5) == 16
}

// clip bounds a peer's string quoted in an error.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
