package md

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"shoal"
	"shoal/storetest"
)

// TestFilePastFourGiB: a file of 4 GiB + 100 bytes (its object a sparse
// file on the data server) has its exact length in md's HEAD, in the GET
// md serves from its own data server, and in the GET it relays in proxy
// mode (the first MiB read; a range at its end). On 32-bit ARM (make
// test-arm runs md's suite under qemu-arm) fasthttp's int length wrapped
// there: HEAD said "Content-Length: 100", and a relayed GET got 503 (md's
// client could not read the data server's length).
func TestFilePastFourGiB(t *testing.T) {
	for _, c := range []struct {
		name, mode string
		local      bool
	}{{"local", DataRedirect, true}, {"proxy", DataProxy, false}} {
		t.Run(c.name, func(t *testing.T) {
			logs := &syncBuffer{}
			e := newEnvLocal(t, c.mode, c.local, func(o *Options) { o.AccessLog = slog.New(slog.NewTextHandler(logs, nil)) })
			testFilePastFourGiB(t, e, logs)
		})
	}
}

func testFilePastFourGiB(t *testing.T, e *env, logs *syncBuffer) {
	ctx := context.Background()
	const size int64 = 4<<30 + 100
	head := []byte("head of a large file")
	_, sums, err := e.ds.Store().Create(ctx, "b16", bytes.NewReader(head))
	if err != nil {
		t.Fatal(err)
	}
	tail := bytes.Repeat([]byte("tail"), 25)
	storetest.Grow(t, e.disk, "b16", 4<<30, tail)
	c := &shoal.Commit{Size: size, Sums: sums, MTime: time.Now(),
		Replicas: []shoal.Replica{{Server: e.ds.ID(), Object: "b16", Size: size, Sum: sums.Adler32}}}
	if _, err := e.db.PutFile(ctx, "/big", shoal.DefaultLayout, c, shoal.Condition{}, time.Now()); err != nil {
		t.Fatal(err)
	}
	want := strconv.FormatInt(size, 10)

	if r := e.do("HEAD", "/big", nil, nil); r.status != 200 || r.h.Get("Content-Length") != want {
		t.Errorf("HEAD = %d, Content-Length %q; want 200, %s", r.status, r.h.Get("Content-Length"), want)
	}
	r := e.do("GET", "/big", map[string]string{"Range": "bytes=4294967296-"}, nil)
	cr := fmt.Sprintf("bytes 4294967296-%d/%d", size-1, size)
	if r.status != 206 || r.h.Get("Content-Range") != cr || r.body != string(tail) {
		t.Errorf("GET of the last 100 bytes = %d, Content-Range %q, %q; want 206, %q, the tail", r.status, r.h.Get("Content-Range"), r.body, cr)
	}
	resp, err := e.http.Get(e.url + "/big")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	first := make([]byte, 1<<20)
	_, err = io.ReadFull(resp.Body, first)
	if resp.StatusCode != http.StatusOK || resp.ContentLength != size || err != nil || !bytes.HasPrefix(first, append(head, 0)) {
		t.Errorf("GET = %d, Content-Length %d, first MiB read: %v; want 200 from md, %d", resp.StatusCode, resp.ContentLength, err, size)
	}
	// md's access log counts the bytes of the whole answer.
	if l := logs.String(); !strings.Contains(l, "method=GET path=/big status=200 bytes="+want) || !strings.Contains(l, "status=206 bytes=100 ") {
		t.Errorf("access log:\n%s\nwant the GET's %s bytes and the range's 100", l, want)
	}
}
