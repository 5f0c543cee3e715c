package diskserver

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"shoal"
	"shoal/internal/httprange"
	"shoal/sign"
	"shoal/storetest"
)

func TestRanges(t *testing.T) {
	ts := startServer(t, Options{})
	data := storetest.Data(9, 100_000)
	if st, _, _ := do(t, "PUT", ts.signed("PUT", "ab", ""), data, nil); st != 201 {
		t.Fatal("PUT failed")
	}
	get := func(rng string) (int, http.Header, []byte) {
		return do(t, "GET", ts.signed("GET", "ab", ""), nil, map[string]string{"Range": rng})
	}
	for _, c := range []struct {
		rng        string
		start, end int // inclusive
	}{
		{"bytes=0-0", 0, 0},
		{"bytes=10-19", 10, 19},
		{"bytes=99990-", 99990, 99999},
		{"bytes=-5", 99995, 99999},
		{"bytes=90000-200000", 90000, 99999},
		{"bytes=-200000", 0, 99999},
		{"bytes= 5-6 ,", 5, 6},
	} {
		st, hdr, body := get(c.rng)
		wantCR := fmt.Sprintf("bytes %d-%d/100000", c.start, c.end)
		if st != 206 || hdr.Get("Content-Range") != wantCR || !bytes.Equal(body, data[c.start:c.end+1]) {
			t.Errorf("Range %q = %d, Content-Range %q, %d bytes; want 206, %q", c.rng, st, hdr.Get("Content-Range"), len(body), wantCR)
		}
	}

	// Several ranges: multipart/byteranges, parts in request order.
	st, hdr, body := get("bytes=0-9, 50000-50009, -3")
	mt, params, err := mime.ParseMediaType(hdr.Get("Content-Type"))
	if st != 206 || err != nil || mt != "multipart/byteranges" {
		t.Fatalf("multi-range = %d, Content-Type %q", st, hdr.Get("Content-Type"))
	}
	if hdr.Get("Content-Length") != strconv.Itoa(len(body)) {
		t.Errorf("multi-range Content-Length %q, body %d bytes", hdr.Get("Content-Length"), len(body))
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	for _, w := range [][2]int{{0, 9}, {50000, 50009}, {99997, 99999}} {
		p, err := mr.NextPart()
		if err != nil {
			t.Fatalf("part %v: %v", w, err)
		}
		got, _ := io.ReadAll(p)
		wantCR := fmt.Sprintf("bytes %d-%d/100000", w[0], w[1])
		if p.Header.Get("Content-Range") != wantCR || !bytes.Equal(got, data[w[0]:w[1]+1]) {
			t.Errorf("part Content-Range %q (%d bytes), want %q", p.Header.Get("Content-Range"), len(got), wantCR)
		}
	}
	if _, err := mr.NextPart(); err != io.EOF {
		t.Errorf("after the last part: %v, want EOF", err)
	}

	// Unsatisfiable: 416 with the size.
	for _, rng := range []string{"bytes=100000-", "bytes=200000-300000", "bytes=-0", "bytes=100000-100001,200000-"} {
		st, hdr, _ := get(rng)
		if st != 416 || hdr.Get("Content-Range") != "bytes */100000" {
			t.Errorf("Range %q = %d, Content-Range %q; want 416, bytes */100000", rng, st, hdr.Get("Content-Range"))
		}
	}
	// Malformed bytes ranges: 400 with a reason naming the Range (the same
	// answer md gives; formerly ignored with a 200).
	for _, rng := range []string{"bytes=abc", "bytes=5-2", "bytes", "bytes=1-2-3", "bytes=--1", "bytes=,", "bytes=+1-2"} {
		st, _, body := get(rng)
		if st != 400 || !strings.Contains(string(body), "Range") {
			t.Errorf("malformed Range %q = %d %q, want 400 naming the Range", rng, st, body)
		}
	}
	// Foreign units and too many ranges: ignored, the whole object (RFC 7233 §3.1).
	for _, rng := range []string{"items=0-1", "bytes=" + strings.Repeat("0-0,", httprange.MaxRanges+1)} {
		st, _, body := get(rng)
		if st != 200 || !bytes.Equal(body, data) {
			t.Errorf("ignored Range %.20q = %d with %d bytes, want 200 with all", rng, st, len(body))
		}
	}
}

func TestBadSignatures(t *testing.T) {
	ts := startServer(t, Options{})
	other := sign.Random()
	good := ts.signed("PUT", "abcd", "")
	u, _ := url.Parse(good)
	q := u.Query()
	with := func(k, v string) string {
		q2 := url.Values{}
		for kk, vv := range q {
			q2[kk] = vv
		}
		if v == "" {
			q2.Del(k)
		} else {
			q2.Set(k, v)
		}
		return ts.URL + "/obj/abcd?" + q2.Encode()
	}
	wrongSig := []byte(q.Get("sig"))
	wrongSig[0] ^= 1
	if wrongSig[0] == q.Get("sig")[0] {
		t.Fatal("test bug")
	}
	cases := map[string]string{
		"wrong sig":      with("sig", string(wrongSig)),
		"non-hex sig":    with("sig", "zz"),
		"expired":        ts.Keys.URL(ts.URL, "PUT", "abcd", "", time.Now().Add(-time.Minute)),
		"unknown kid":    with("kid", "nope"),
		"other secret":   other.URL(ts.URL, "PUT", "abcd", "", time.Now().Add(time.Minute)),
		"signed for GET": ts.signed("GET", "abcd", ""),
		"other object":   strings.Replace(ts.signed("PUT", "abce", ""), "/obj/abce", "/obj/abcd", 1),
		"upload added":   good + "&up=x",
		"later expiry":   with("exp", strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10)),
		"bad expiry":     with("exp", "soon"),
		"no sig":         with("sig", ""),
		"no kid":         with("kid", ""),
		"no exp":         with("exp", ""),
		"no query":       ts.URL + "/obj/abcd",
	}
	for name, u := range cases {
		st, _, body := do(t, "PUT", u, []byte("data"), nil)
		if st != 403 || len(bytes.TrimSpace(body)) == 0 {
			t.Errorf("%s: PUT = %d %q, want 403 with a reason", name, st, body)
		}
	}
	if _, err := ts.Store().Open(context.Background(), "abcd"); !shoal.IsKind(err, shoal.KindNotFound) {
		t.Errorf("an object was stored by a refused PUT: %v", err)
	}
	// The good URL still works; GET and DELETE need their own signatures.
	if st, _, _ := do(t, "PUT", good, []byte("data"), nil); st != 201 {
		t.Errorf("good PUT = %d", st)
	}
	if st, _, _ := do(t, "GET", strings.Replace(good, "/obj/", "/obj/", 1), nil, nil); st != 403 {
		t.Errorf("GET with a PUT signature = %d, want 403", st)
	}
	if st, _, _ := do(t, "DELETE", ts.signed("GET", "abcd", ""), nil, nil); st != 403 {
		t.Errorf("DELETE with a GET signature = %d, want 403", st)
	}
	// Internal endpoints need a signed call.
	if st, _, _ := do(t, "POST", ts.URL+"/.shoal/objects", []byte("null"), nil); st != 403 {
		t.Errorf("unsigned objects call = %d, want 403", st)
	}
}

func TestBadIDsAndMethods(t *testing.T) {
	ts := startServer(t, Options{})
	for _, id := range []string{"ABCD", "xyz", "ab%2fcd", "ab/cd", strings.Repeat("a", 65), ""} {
		st, _, _ := do(t, "GET", ts.URL+"/obj/"+id+"?exp=1&kid=k0&sig=00", nil, nil)
		if st != 400 {
			t.Errorf("GET /obj/%s = %d, want 400", id, st)
		}
	}
	// fasthttp resolves dot segments before routing: this is /etc, not an object.
	if st, _, _ := do(t, "GET", ts.URL+"/obj/..%2f..%2fetc?exp=1&kid=k0&sig=00", nil, nil); st != 404 {
		t.Errorf("GET /obj/..%%2f..%%2fetc = %d, want 404", st)
	}
	if st, _, _ := do(t, "POST", ts.signed("POST", "abcd", ""), nil, nil); st != 405 {
		t.Errorf("POST on an object = %d, want 405", st)
	}
	if st, _, _ := do(t, "GET", ts.URL+"/elsewhere", nil, nil); st != 404 {
		t.Errorf("GET /elsewhere = %d, want 404", st)
	}
}

// TestClientDiesMidPut sends half a body over raw TCP and hangs up: no
// object may appear and no temp file may stay, whether temp files are
// unnamed (O_TMPFILE) or named under tmp/.
func TestClientDiesMidPut(t *testing.T) {
	for _, unnamed := range []bool{true, false} {
		t.Run(fmt.Sprintf("unnamed=%v", unnamed), func(t *testing.T) {
			ts := startServer(t, Options{})
			if unnamed && !ts.store.disks[0].unnamed {
				t.Skip("this filesystem has no O_TMPFILE")
			}
			ts.store.disks[0].unnamed = unnamed
			testClientDiesMidPut(t, ts)
		})
	}
}

func testClientDiesMidPut(t *testing.T, ts *testServer) {
	data := storetest.Data(4, 1<<20)
	u, _ := url.Parse(ts.signed("PUT", "dead", ""))
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "PUT %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n\r\n", u.RequestURI(), u.Host, len(data))
	if _, err := conn.Write(data[:len(data)/2]); err != nil {
		t.Fatal(err)
	}
	// Wait (bounded) until the upload is in progress, so the hang-up hits it.
	temps := func() int64 { return ts.store.disks[0].temps.Load() }
	waitFor(t, "the upload to start", func() bool { return temps() == 1 })
	conn.Close()
	waitFor(t, "the temp file to go", func() bool { return temps() == 0 && len(tmpFiles(t, ts.Dir)) == 0 })
	if _, err := ts.Store().Open(context.Background(), "dead"); !shoal.IsKind(err, shoal.KindNotFound) {
		t.Errorf("half-uploaded object is visible: %v", err)
	}
	n := 0
	ts.Store().Walk(context.Background(), func(shoal.ObjectInfo) error { n++; return nil })
	if n != 0 {
		t.Errorf("Walk lists %d objects after an abandoned PUT", n)
	}
	// The id is free for a real upload.
	if st, _, body := do(t, "PUT", ts.signed("PUT", "dead", ""), data, nil); st != 201 {
		t.Errorf("PUT after the abandoned one = %d %s", st, body)
	}
}

// TestBodyLimit: a PUT over MaxBodySize, with a Content-Length or chunked,
// is refused with 413 and nothing is kept.
func TestBodyLimit(t *testing.T) {
	ts := startServer(t, Options{MaxBodySize: 100_000})
	st, _, _ := do(t, "PUT", ts.signed("PUT", "b19", ""), make([]byte, 100_001), nil)
	if st != 413 {
		t.Errorf("PUT over the limit = %d, want 413", st)
	}
	// A partial PUT (RFC 9110 §14.5) would store the part as the object.
	if st, _, body := do(t, "PUT", ts.signed("PUT", "b19", ""), []byte("x"), map[string]string{"Content-Range": "bytes 0-0/10"}); st != 400 || !strings.Contains(string(body), "partial") {
		t.Errorf("PUT with Content-Range = %d %q, want 400 (partial updates are not supported)", st, body)
	}
	// A chunked body over the limit: the server answers 413 and closes
	// while the client may still be writing, so the body is written by a
	// goroutine that ignores its errors (net/http's client would report
	// its own write's reset instead of the answer, as it did once under
	// qemu), and the answer is read off the connection.
	u, _ := url.Parse(ts.signed("PUT", "b19", ""))
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	go func() {
		fmt.Fprintf(conn, "PUT %s HTTP/1.1\r\nHost: %s\r\nTransfer-Encoding: chunked\r\n\r\n", u.RequestURI(), u.Host)
		chunk := make([]byte, 10_000)
		for range 30 {
			if _, err := fmt.Fprintf(conn, "%x\r\n%s\r\n", len(chunk), chunk); err != nil {
				return
			}
		}
		io.WriteString(conn, "0\r\n\r\n")
	}()
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 413 {
		t.Errorf("chunked PUT over the limit = %d, want 413", resp.StatusCode)
	}
	if _, err := ts.Store().Open(context.Background(), "b19"); !shoal.IsKind(err, shoal.KindNotFound) {
		t.Errorf("oversized object stored: %v", err)
	}
	if got := tmpFiles(t, ts.Dir); len(got) != 0 {
		t.Errorf("temp files left: %v", got)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestPutTooBigForDisks: a Content-Length no disk can hold is refused with
// 507 at once (after the 8 KiB fasthttp pre-reads), not after the upload.
func TestPutTooBigForDisks(t *testing.T) {
	ts := startServer(t, Options{MaxBodySize: 1 << 62})
	u, _ := url.Parse(ts.signed("PUT", "b16b", ""))
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "PUT %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n\r\n", u.RequestURI(), u.Host, int64(1)<<60)
	conn.Write(make([]byte, 8<<10))
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 507 {
		t.Errorf("PUT of 1 EiB = %d, want 507", resp.StatusCode)
	}
	if got := tmpFiles(t, ts.Dir); len(got) != 0 {
		t.Errorf("temp files left: %v", got)
	}
}
