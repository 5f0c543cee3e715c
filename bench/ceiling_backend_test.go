package bench

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"shoal/catalog"
	"shoal/internal/testsvc"
)

// serveHandler serves h on a loopback port for the rest of the test.
func serveHandler(t *testing.T, h fasthttp.RequestHandler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &fasthttp.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Shutdown() })
	return "http://" + ln.Addr().String()
}

func head(t *testing.T, url string) *http.Response {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Head(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// The memcached ceiling answers HEAD from memcached and 503 once it is
// gone: each request really does the get.
func TestMemcachedCeiling(t *testing.T) {
	p := testsvc.StartMemcached(t)
	b := ceilingBackend{backend: "memcached", memcached: p.Addr}
	srv, _, release, err := b.server(0)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	url := serveHandler(t, srv.Handler)
	if r := head(t, url+"/any"); r.StatusCode != 200 || r.ContentLength != 100 {
		t.Errorf("HEAD = %d, Content-Length %d; want 200, 100", r.StatusCode, r.ContentLength)
	}
	p.Kill()
	if r := head(t, url+"/any"); r.StatusCode != 503 {
		t.Errorf("HEAD with memcached killed = %d, want 503", r.StatusCode)
	}
}

// The SQL ceiling answers HEAD with a SELECT over the catalog's entries,
// and 503 once MariaDB is stopped.
func TestSQLCeiling(t *testing.T) {
	maria := testsvc.StartMariaDB(t)
	db, err := catalog.Open(context.Background(), catalog.Options{DSN: maria.DSN})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Mkdir(context.Background(), "/d", time.Now()); err != nil {
		t.Fatal(err)
	}
	db.Close()
	b := ceilingBackend{backend: "sql", catalog: maria.DSN, conns: 4}
	srv, _, release, err := b.server(0)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	url := serveHandler(t, srv.Handler)
	ok := 0
	for range 4 {
		if r := head(t, url+"/any"); r.StatusCode == 200 {
			ok++
		}
	}
	if ok == 0 {
		t.Errorf("no HEAD found an entry")
	}
	maria.Stop()
	if r := head(t, url+"/any"); r.StatusCode != 503 {
		t.Errorf("HEAD with MariaDB stopped = %d, want 503", r.StatusCode)
	}
	if _, _, _, err := (&ceilingBackend{backend: "sql", catalog: "sqlite:/x"}).server(0); err == nil {
		t.Errorf("a sqlite DSN was accepted by the SQL ceiling")
	}
}
