package diskserver

import (
	"bytes"
	"context"
	"testing"

	"github.com/valyala/fasthttp"

	"shoal/storetest"
)

// BenchmarkGet1MiB fetches a 1 MiB object through the HTTP server over
// loopback with a fasthttp client (whole-file GET: the sendfile path).
func BenchmarkGet1MiB(b *testing.B) {
	ts := startServer(b, Options{})
	data := storetest.Data(1, 1<<20)
	if _, _, err := ts.Store().Create(context.Background(), "be4c", bytes.NewReader(data)); err != nil {
		b.Fatal(err)
	}
	url := ts.signed("GET", "be4c", "")
	c := &fasthttp.Client{}
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		req.SetRequestURI(url)
		if err := c.Do(req, resp); err != nil {
			b.Fatal(err)
		}
		if resp.StatusCode() != 200 || len(resp.Body()) != len(data) {
			b.Fatalf("GET = %d, %d bytes", resp.StatusCode(), len(resp.Body()))
		}
	}
}
