package gw

import (
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"shoal/diskserver"
	"shoal/internal/objhttp"
)

// BenchmarkGet64KiB: GET of a 64 KiB ec:4+2 object (one partial stripe)
// through a gw.Server over six diskservers on loopback, one client
// connection. shard-reqs/op counts the requests the diskservers receive
// per GET (6 HEAD + 6 header + 6 footer reads at open, 4 chunk reads).
func BenchmarkGet64KiB(b *testing.B) {
	const size = 64 << 10
	c := startCluster(b, 6)
	// Count the shard requests: diskservers over the same data dirs, each
	// in a server whose handler counts.
	var reqs atomic.Int64
	urls := map[string]string{}
	for _, d := range c.disks {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		ds, err := diskserver.New(diskserver.Options{ID: d.id, Dirs: []string{d.dir}, Keys: d.keys, PublicURL: "http://" + ln.Addr().String(), ReserveBytes: -1})
		if err != nil {
			b.Fatal(err)
		}
		h := ds.Handler()
		hs := objhttp.NewHTTPServer(func(ctx *fasthttp.RequestCtx) { reqs.Add(1); h(ctx) }, "ds", 1<<30)
		go hs.Serve(ln)
		b.Cleanup(func() { hs.Shutdown() })
		urls[d.id] = "http://" + ln.Addr().String()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	gwURL := "http://" + ln.Addr().String()
	srv, err := NewServer(ServerOptions{ID: "gw0", PublicURL: gwURL, Keys: c.keys, Servers: urls})
	if err != nil {
		b.Fatal(err)
	}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	exp := time.Now().Add(time.Hour)
	req, _ := http.NewRequest("PUT", SignedURL(c.keys, gwURL, "PUT", "b64", "", ec42, c.ids(), exp), newGen(size))
	req.ContentLength = size
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 201 {
		b.Fatalf("PUT: %d", resp.StatusCode)
	}
	get := SignedURL(c.keys, gwURL, "GET", "b64", "", ec42, c.ids(), exp)
	b.SetBytes(size)
	r0 := reqs.Load()
	for b.Loop() {
		resp, err := http.Get(get)
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || n != size || resp.StatusCode != 200 {
			b.Fatalf("GET: %d, %d bytes, %v", resp.StatusCode, n, err)
		}
	}
	b.ReportMetric(float64(reqs.Load()-r0)/float64(b.N), "shard-reqs/op")
}
