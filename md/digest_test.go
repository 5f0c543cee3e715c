package md

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"fmt"
	"hash/adler32"
	"testing"
)

func TestWantDigestEndToEnd(t *testing.T) {
	e := newEnv(t, DataProxy)
	for _, size := range []int{100, 100000} {
		data := bytes.Repeat([]byte("shoal-digest "), size/13+1)[:size]
		path := fmt.Sprintf("/d%d", size)
		e.put(path, data).want(t, "PUT", 201, "")
		m := md5.Sum(data)
		wantA := fmt.Sprintf("adler32=%08x", adler32.Checksum(data))
		wantM := "md5=" + base64.StdEncoding.EncodeToString(m[:])
		for _, method := range []string{"HEAD", "GET"} {
			cases := []struct{ hdr, want string }{
				{"adler32", wantA},
				{"md5", wantM},
				{"ADLER32;q=0.2, MD5;q=0.8", wantM + "," + wantA},
				{"md5,adler32", wantM + "," + wantA},
			}
			for _, c := range cases {
				r := e.do(method, path, map[string]string{"Want-Digest": c.hdr}, nil)
				if got := r.h.Get("Digest"); got != c.want {
					t.Errorf("%s %s Want-Digest %q: Digest %q, want %q", method, path, c.hdr, got, c.want)
				}
			}
		}
	}
}
