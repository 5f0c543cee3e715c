package diskserver

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"fmt"
	"hash/adler32"
	"testing"

	"shoal"
	"shoal/storetest"
	"shoal/wire"
)

func TestPutGetDelete(t *testing.T) {
	ts := startServer(t, Options{})
	data := storetest.Data(7, 200_000)
	st, hdr, body := do(t, "PUT", ts.signed("PUT", "abc123", ""), data, nil)
	if st != 201 {
		t.Fatalf("PUT = %d %s, want 201", st, body)
	}
	md := md5.Sum(data)
	want := fmt.Sprintf("adler32=%08x,md5=%s", adler32.Checksum(data), base64.StdEncoding.EncodeToString(md[:]))
	if got := hdr.Get(wire.HeaderDigest); got != want {
		t.Errorf("Digest = %q, want %q", got, want)
	}
	st, hdr, body = do(t, "GET", ts.signed("GET", "abc123", ""), nil, nil)
	if st != 200 || !bytes.Equal(body, data) {
		t.Fatalf("GET = %d, %d bytes (equal: %v)", st, len(body), bytes.Equal(body, data))
	}
	if hdr.Get("Accept-Ranges") != "bytes" || hdr.Get("Content-Length") != "200000" {
		t.Errorf("GET headers: Accept-Ranges %q, Content-Length %q", hdr.Get("Accept-Ranges"), hdr.Get("Content-Length"))
	}
	// HEAD works with a URL signed for HEAD or for GET.
	for _, m := range []string{"HEAD", "GET"} {
		st, hdr, _ = do(t, "HEAD", ts.signed(m, "abc123", ""), nil, nil)
		if st != 200 || hdr.Get("Content-Length") != "200000" {
			t.Errorf("HEAD signed for %s = %d, Content-Length %q", m, st, hdr.Get("Content-Length"))
		}
	}
	// A second PUT of the same id is refused; the first content stays.
	st, _, _ = do(t, "PUT", ts.signed("PUT", "abc123", ""), []byte("other"), nil)
	if want := shoal.KindExist.Status(); st != want {
		t.Errorf("second PUT = %d, want %d", st, want)
	}
	for range 2 {
		if st, _, body := do(t, "DELETE", ts.signed("DELETE", "abc123", ""), nil, nil); st != 204 {
			t.Fatalf("DELETE = %d %s, want 204", st, body)
		}
	}
	if st, _, _ := do(t, "GET", ts.signed("GET", "abc123", ""), nil, nil); st != 404 {
		t.Errorf("GET after DELETE = %d, want 404", st)
	}
}
