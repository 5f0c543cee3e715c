package md

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"strings"
	"testing"

	"shoal/storetest"
)

// TestProxyWindows: with the relay window lowered to 1,000 bytes, md in
// proxy mode reads a file of 10,500 bytes from its data server one window
// at a time — 11 Range GETs for the whole file, counted in the data
// server's access log — and answers the whole, a range across windows, a
// suffix, several ranges and an unsatisfiable one as every shoal server
// does, bytes exact. (The windows are what lets a 32-bit md relay a file
// of 2 GiB or more: TestFilePastFourGiB under qemu-arm.)
func TestProxyWindows(t *testing.T) {
	t.Cleanup(SetProxyWindow(1000))
	e := newEnv(t, DataProxy)
	data := storetest.Data(7, 10500)
	if r := e.put("/w", data); r.status != 201 {
		t.Fatalf("PUT = %d %s", r.status, r.body)
	}

	before := strings.Count(e.dsLogs.String(), "method=GET")
	if r := e.get("/w", nil); r.status != 200 || r.body != string(data) || r.h.Get("Content-Length") != "10500" {
		t.Fatalf("GET = %d, %d bytes (Content-Length %q), equal %v", r.status, len(r.body), r.h.Get("Content-Length"), r.body == string(data))
	}
	if n := strings.Count(e.dsLogs.String(), "method=GET") - before; n != 11 {
		t.Errorf("the whole file took %d GETs of the data server, want 11 windows", n)
	}

	for _, c := range []struct {
		rng, cr    string
		start, end int
	}{
		{"bytes=900-2100", "bytes 900-2100/10500", 900, 2101},
		{"bytes=-1500", "bytes 9000-10499/10500", 9000, 10500},
		{"bytes=10000-", "bytes 10000-10499/10500", 10000, 10500},
		{"bytes=999-999", "bytes 999-999/10500", 999, 1000},
	} {
		r := e.get("/w", map[string]string{"Range": c.rng})
		if r.status != 206 || r.h.Get("Content-Range") != c.cr || r.body != string(data[c.start:c.end]) {
			t.Errorf("Range %s = %d, Content-Range %q, %d bytes (equal %v); want 206, %q", c.rng, r.status,
				r.h.Get("Content-Range"), len(r.body), r.body == string(data[c.start:c.end]), c.cr)
		}
	}

	r := e.get("/w", map[string]string{"Range": "bytes=0-9,1500-2600"})
	_, params, err := mime.ParseMediaType(r.h.Get("Content-Type"))
	if r.status != 206 || err != nil {
		t.Fatalf("two ranges = %d, Content-Type %q", r.status, r.h.Get("Content-Type"))
	}
	mr := multipart.NewReader(strings.NewReader(r.body), params["boundary"])
	for _, want := range [][2]int{{0, 10}, {1500, 2601}} {
		p, err := mr.NextPart()
		if err != nil {
			t.Fatalf("part %v: %v", want, err)
		}
		got, _ := io.ReadAll(p)
		cr := fmt.Sprintf("bytes %d-%d/10500", want[0], want[1]-1)
		if p.Header.Get("Content-Range") != cr || !bytes.Equal(got, data[want[0]:want[1]]) {
			t.Errorf("part %q, %d bytes; want %s", p.Header.Get("Content-Range"), len(got), cr)
		}
	}

	if r := e.get("/w", map[string]string{"Range": "bytes=20000-"}); r.status != 416 || r.h.Get("Content-Range") != "bytes */10500" {
		t.Errorf("Range past the end = %d, Content-Range %q; want 416, bytes */10500", r.status, r.h.Get("Content-Range"))
	}
}
