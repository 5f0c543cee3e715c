package diskserver

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"shoal/storetest"
)

// TestObjectPastFourGiB: an object of 4 GiB + 100 bytes (a sparse file)
// is answered with its exact length everywhere — HEAD, a full GET (the
// first MiB read), a range at its end — on every platform. On 32-bit ARM
// (make test-arm runs this under qemu-arm) fasthttp's int length wrapped:
// the GET said "Content-Length: 100" and sent 100 bytes, with a 200.
func TestObjectPastFourGiB(t *testing.T) {
	var logs lockedBuffer
	ts := startServer(t, Options{AccessLog: slog.New(slog.NewTextHandler(&logs, nil))})
	const id = "b16"
	if st, _, _ := do(t, "PUT", ts.signed("PUT", id, ""), []byte("head of a large file"), nil); st != 201 {
		t.Fatalf("PUT = %d", st)
	}
	const size int64 = 4<<30 + 100
	tail := bytes.Repeat([]byte("tail"), 25)
	storetest.Grow(t, ts.Dir, id, 4<<30, tail)
	want := strconv.FormatInt(size, 10)

	st, hdr, body := do(t, "HEAD", ts.signed("HEAD", id, ""), nil, nil)
	if st != 200 || hdr.Get("Content-Length") != want || len(body) != 0 {
		t.Errorf("HEAD = %d, Content-Length %q, %d body bytes; want 200, %s", st, hdr.Get("Content-Length"), len(body), want)
	}
	st, hdr, body = do(t, "GET", ts.signed("GET", id, ""), nil, map[string]string{"Range": "bytes=4294967296-"})
	cr := fmt.Sprintf("bytes 4294967296-%d/%d", size-1, size)
	if st != 206 || hdr.Get("Content-Range") != cr || !bytes.Equal(body, tail) {
		t.Errorf("GET of the last 100 bytes = %d, Content-Range %q, %q; want 206, %q, the tail", st, hdr.Get("Content-Range"), body, cr)
	}

	resp, err := http.Get(ts.signed("GET", id, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	first := make([]byte, 1<<20)
	_, err = io.ReadFull(resp.Body, first)
	if resp.StatusCode != 200 || resp.ContentLength != size || err != nil || !bytes.HasPrefix(first, []byte("head of a large file\x00")) {
		t.Errorf("GET = %d, Content-Length %d, first MiB read: %v; want 200, %d", resp.StatusCode, resp.ContentLength, err, size)
	}
	// The access log counts the bytes of the whole answer.
	if l := logs.String(); !strings.Contains(l, "method=GET object=b16 status=200 bytes="+want) || !strings.Contains(l, "status=206 bytes=100 ") {
		t.Errorf("access log:\n%s\nwant the GET's %s bytes and the range's 100", l, want)
	}
}
