package dav

import (
	"bytes"
	"encoding/base64"
	"testing"

	"shoal"
)

func TestParseWantDigestOrder(t *testing.T) {
	sums := shoal.Sums{Adler32: 0x01020304, MD5: bytes.Repeat([]byte{1}, 16)}
	md5b64 := base64.StdEncoding.EncodeToString(sums.MD5)
	cases := []struct{ in, want string }{
		{"adler32", "adler32=01020304"},
		{"ADLER32", "adler32=01020304"},
		{"MD5", "md5=" + md5b64},
		{"md5, adler32", "md5=" + md5b64 + ",adler32=01020304"},
		{"adler32;q=0.3, md5;q=0.9", "md5=" + md5b64 + ",adler32=01020304"},
		{"md5;q=0.5, adler32;q=0.5", "md5=" + md5b64 + ",adler32=01020304"},
		{"sha-256, adler32", "adler32=01020304"}, // no sha-256 stored
		{"unixsum, crc32c", ""},
		{"md5;q=0, adler32", "adler32=01020304"},
		{" adler32 ; q=1.0 ,adler32", "adler32=01020304"},
	}
	for _, c := range cases {
		w := ParseWantDigest([]byte(c.in))
		if got := string(AppendDigest(nil, &w, &sums)); got != c.want {
			t.Errorf("Want-Digest %q: got %q, want %q", c.in, got, c.want)
		}
	}
}
