package md

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"shoal"
	"shoal/wire"
)

// TestAutoMode: GETs are redirected unless the User-Agent is one known
// not to follow redirects; PUT without Expect is proxied.
func TestAutoMode(t *testing.T) {
	e := newEnv(t, DataAuto)
	data := bytes.Repeat([]byte("q"), 20000)
	r := e.do("PUT", "/f", nil, data)
	r.want(t, "PUT without Expect (proxied)", 201, "")
	if r.h.Get("ETag") == "" {
		t.Error("proxied PUT has no ETag")
	}
	r2 := e.do("PUT", "/f", nil, data)
	r2.want(t, "proxied overwrite", 204, "")
	if r2.h.Get("ETag") == "" || r2.h.Get("ETag") == r.h.Get("ETag") {
		t.Errorf("overwrite ETag %q, first %q", r2.h.Get("ETag"), r.h.Get("ETag"))
	}
	e.do("GET", "/f", map[string]string{"User-Agent": "curl/8.0"}, nil).want(t, "GET by curl", 302, "")
	for _, ua := range []string{"Microsoft-WebDAV-MiniRedir/10.0", "litmus/0.13 neon/0.32", "davfs2/1.7"} {
		r := e.do("GET", "/f", map[string]string{"User-Agent": ua}, nil)
		if r.status != 200 || r.body != string(data) {
			t.Errorf("GET by %s: %d, %d bytes; want it proxied", ua, r.status, len(r.body))
		}
	}
	// HEAD is never redirected.
	e.do("HEAD", "/f", map[string]string{"User-Agent": "curl/8.0"}, nil).want(t, "HEAD", 200, "")
}

func TestDirectoryGet(t *testing.T) {
	e := newEnv(t, DataAuto)
	e.do("MKCOL", "/d", nil, nil)
	e.do("MKCOL", "/d/sub", nil, nil)
	e.put("/d/a&b.txt", []byte("x"))
	r := e.do("GET", "/d/", nil, nil)
	r.want(t, "GET collection", 200, `<a href="/d/sub/">sub/</a>`)
	if !strings.Contains(r.body, `href="/d/a%26b.txt">a&amp;b.txt</a>`) || !strings.HasPrefix(r.h.Get("Content-Type"), "text/html") {
		t.Errorf("listing %q %q", r.h.Get("Content-Type"), r.body)
	}
}

// TestNoDataServer: with no active data server a large PUT is 507 and
// nothing changes; small files still go inline.
func TestNoDataServer(t *testing.T) {
	e := newEnv(t, DataProxy)
	if err := e.db.SetServerState(context.Background(), "ds1", shoal.ServerReadOnly); err != nil {
		t.Fatal(err)
	}
	e.md.placement.Invalidate()
	before := e.snapshot()
	e.do("PUT", "/big", nil, bytes.Repeat([]byte("x"), 10000)).want(t, "PUT with no writable server", 507, "no live data server")
	if e.snapshot() != before {
		t.Error("refused PUT changed something")
	}
	e.put("/small", []byte("x")).want(t, "inline PUT", 201, "")
	// A heartbeat keeps the state an operator set.
	if err := e.ds.Heartbeat(context.Background()); err != nil {
		t.Fatal(err)
	}
	servers, _ := e.db.Servers(context.Background())
	if servers[0].State != shoal.ServerReadOnly {
		t.Errorf("heartbeat reset the state to %s", servers[0].State)
	}
}

func TestLimitsAndInternal(t *testing.T) {
	e := newEnv(t, DataProxy, func(o *Options) { o.MaxPutBody = 50000 })
	e.do("MKCOL", "/d", nil, nil)
	before := e.snapshot()
	e.do("PUT", "/big", nil, bytes.Repeat([]byte("x"), 50001)).want(t, "PUT over MaxPutBody", 413, "larger than")
	e.do("DELETE", "/d/%23frag", nil, nil).want(t, "escaped # is a name", 404, "")
	c, br := rawConn(t, e.url)
	fmt.Fprintf(c, "DELETE /d/#frag HTTP/1.1\r\nHost: x\r\n\r\n")
	res, err := http.ReadResponse(br, nil)
	c.Close()
	if err != nil || res.StatusCode != 400 {
		t.Errorf("DELETE with a fragment: %v %v", res, err)
	}
	// Signed internal calls with bad bodies.
	cl := wire.NewClient(e.url, e.keys)
	if st, err := cl.Call(wire.PathCommit, map[string]any{"upload": "nope", "adler32": "zz"}, nil); st != 400 {
		t.Errorf("commit with a bad checksum: %d %v", st, err)
	}
	if st, err := cl.Call(wire.PathCommit, wire.CommitRequest{Upload: "nope", Adler32: "00000001"}, nil); st != 404 {
		t.Errorf("commit of an unknown upload: %d %v", st, err)
	}
	if st, err := cl.Call(wire.PathHeartbeat, wire.Heartbeat{}, nil); st != 400 {
		t.Errorf("heartbeat without id: %d %v", st, err)
	}
	if st, err := cl.Call("/.shoal/nothing", struct{}{}, nil); st != 404 {
		t.Errorf("unknown internal path: %d %v", st, err)
	}
	if e.snapshot() != before {
		t.Error("refused requests changed something")
	}
}
