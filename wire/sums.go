package wire

import (
	"encoding/hex"
	"fmt"
	"strconv"

	"shoal"
)

// FormatAdler32 is the WLCG form of an adler32: 8 lower-case hex digits.
func FormatAdler32(v uint32) string { return fmt.Sprintf("%08x", v) }

// FormatSums returns the wire forms of sums.
func FormatSums(s shoal.Sums) (adler, md5, sha string) {
	return FormatAdler32(s.Adler32), hex.EncodeToString(s.MD5), hex.EncodeToString(s.SHA256)
}

// ParseSums parses the wire forms of checksums (md5 and sha256 may be empty).
func ParseSums(adler, md5, sha string) (shoal.Sums, error) {
	bad := func(what string) (shoal.Sums, error) {
		return shoal.Sums{}, shoal.Errorf("wire.ParseSums", shoal.KindInvalid, "bad %s checksum", what)
	}
	var s shoal.Sums
	if len(adler) != 8 {
		return bad("adler32")
	}
	a, err := strconv.ParseUint(adler, 16, 32)
	if err != nil {
		return bad("adler32")
	}
	s.Adler32 = uint32(a)
	if md5 != "" {
		if s.MD5, err = hex.DecodeString(md5); err != nil || len(s.MD5) != 16 {
			return bad("md5")
		}
	}
	if sha != "" {
		if s.SHA256, err = hex.DecodeString(sha); err != nil || len(s.SHA256) != 32 {
			return bad("sha256")
		}
	}
	return s, nil
}
