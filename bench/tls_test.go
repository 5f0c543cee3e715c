package bench

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"maps"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/valyala/fasthttp"

	"shoal/internal/testhttp"
	"shoal/tlsconf"
)

// tlsTarget serves 200 over TLS with a certificate of ca and counts the
// connections it accepts and the requests it answers.
func tlsTarget(t *testing.T, ca *tlsconf.CA) (url string, conns, reqs *atomic.Int64) {
	t.Helper()
	ln, url := testhttp.ListenTLS(t, ca)
	conns, reqs = new(atomic.Int64), new(atomic.Int64)
	srv := &fasthttp.Server{
		Handler: func(ctx *fasthttp.RequestCtx) { reqs.Add(1) },
		ConnState: func(_ net.Conn, s fasthttp.ConnState) {
			if s == fasthttp.StateNew {
				conns.Add(1)
			}
		},
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Shutdown() })
	return url, conns, reqs
}

// TestTLSTargets: an https target is verified against Options.TLS (a
// server of another CA gets only network errors), keep-alive reuses one
// connection per worker, and NewConn opens one per request.
func TestTLSTargets(t *testing.T) {
	ca, err := tlsconf.NewCA("bench test CA")
	if err != nil {
		t.Fatal(err)
	}
	other, err := tlsconf.NewCA("another CA")
	if err != nil {
		t.Fatal(err)
	}
	url, conns, reqs := tlsTarget(t, ca)
	ctx := context.Background()
	trust := &tls.Config{RootCAs: ca.Pool()}
	spec := Spec{Name: "stat", Op: OpStat, Paths: []string{"/a", "/b"}}

	r := newRunner(t, Options{URL: url, Concurrency: 2, TLS: trust}, spec)
	if res := r.Phase(ctx, Limits{Count: 40}); res.OK != 40 || conns.Load() != 2 || reqs.Load() != 40 {
		t.Fatalf("keep-alive: ok %d, server saw %d connections and %d requests; want 40, 2, 40", res.OK, conns.Load(), reqs.Load())
	}
	conns.Store(0)
	reqs.Store(0)
	r = newRunner(t, Options{URL: url, Concurrency: 2, TLS: trust, NewConn: true}, spec)
	if res := r.Phase(ctx, Limits{Count: 30}); res.OK != 30 || conns.Load() != 30 || reqs.Load() != 30 {
		t.Fatalf("new-conn: ok %d, server saw %d connections and %d requests; want 30 each", res.OK, conns.Load(), reqs.Load())
	}
	r = newRunner(t, Options{URL: url, Concurrency: 1, TLS: &tls.Config{RootCAs: other.Pool()}}, spec)
	if res := r.Phase(ctx, Limits{Count: 3}); res.OK != 0 || res.ByClass["net"] != 3 {
		t.Fatalf("a server of another CA: ok %d, network errors %d", res.OK, res.ByClass["net"])
	}
}

// authTarget answers 200 and counts the requests carrying each
// Authorization value ("" for none).
func authTarget(t *testing.T) (string, func() map[string]int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[string]int{}
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		mu.Lock()
		seen[string(ctx.Request.Header.Peek("Authorization"))]++
		mu.Unlock()
	}}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Shutdown() })
	return "http://" + ln.Addr().String(), func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(seen)
	}
}

// TestVsAnonymous: --user sends Basic to both targets of --vs, and with
// --vs-anonymous to --url only.
func TestVsAnonymous(t *testing.T) {
	a, seenA := authTarget(t)
	b, seenB := authTarget(t)
	paths := filepath.Join(t.TempDir(), "paths")
	os.WriteFile(paths, []byte("/x\n"), 0o644)
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("alice:pw"))
	args := []string{"stat", "--url", a, "--vs", b, "--paths", paths, "-u", "alice:pw", "-n", "20", "--rounds", "2", "--warmup", "0", "-q"}
	runCLI(t, args...)
	if seenA()[basic] != 40 || seenB()[basic] != 40 {
		t.Fatalf("without --vs-anonymous: %v, %v; want 40 with Basic on each", seenA(), seenB())
	}
	runCLI(t, append(args, "--vs-anonymous")...)
	if seenA()[basic] != 80 || seenB()[basic] != 40 || seenB()[""] != 40 {
		t.Fatalf("with --vs-anonymous: %v, %v", seenA(), seenB())
	}
}
