package netguard

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"shoal/internal/testhttp"
	"shoal/tlsconf"
)

// TestSetBodyPastFraming: a body longer than fasthttp can frame (on
// 32-bit platforms 2 GiB or more; here maxFramed is lowered) reaches a
// real HTTP client, over plain TCP and over TLS (a certificate of a CA
// made here, verified), with its exact Content-Length, every byte (sent with
// sendfile from a FileBody, and copied from any other reader), the
// status and headers set after SetBody, and the connection closed after
// it; a HEAD gets the length and no body; the body is closed. A body
// within the bound keeps fasthttp's framing and the connection.
func TestSetBodyPastFraming(t *testing.T) {
	data, f := fileOf(t, 3*sendChunk/2+777)
	defer func(m int64) { maxFramed = m }(maxFramed)
	maxFramed = 4096
	closed := &atomicCloser{}
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		off, _ := strconv.Atoi(string(ctx.QueryArgs().Peek("off")))
		n := int64(len(data) - off)
		if ctx.QueryArgs().Has("small") {
			n = 1000
		}
		switch {
		case ctx.IsHead() && ctx.QueryArgs().Has("nobody"):
			SetBody(ctx, nil, n)
			ctx.Response.SkipBody = true
		case ctx.QueryArgs().Has("copy"):
			SetBody(ctx, struct{ io.Reader }{bytes.NewReader(data[off : int64(off)+n])}, n)
		default:
			SetBody(ctx, NewFileBody(f, int64(off), n, closed), n)
		}
		ctx.SetStatusCode(fasthttp.StatusPartialContent)
		ctx.Response.Header.Set("X-After", "set after SetBody")
	}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(Listen(ln, Limits{WriteIdle: 5 * time.Second}))
	defer srv.Shutdown()
	// Over TLS as md serves it (cmd/shoal): the guarded connection wraps
	// the TLS one, so the body is copied, not sent with sendfile.
	ca, err := tlsconf.NewCA("test CA")
	if err != nil {
		t.Fatal(err)
	}
	tln, turl := testhttp.ListenTLS(t, ca)
	tsrv := &fasthttp.Server{Handler: srv.Handler}
	go tsrv.Serve(Listen(tln, Limits{WriteIdle: 5 * time.Second}))
	defer tsrv.Shutdown()
	for _, base := range []string{"http://" + ln.Addr().String() + "/?", turl + "/?"} {
		testPastFraming(t, base, ca.Pool(), data)
	}
	// Every FileBody is closed: 2 GETs and a HEAD hijacked, 1 GET by
	// fasthttp, over each of the two listeners.
	deadline := time.Now().Add(5 * time.Second)
	for closed.n.Load() != 8 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := closed.n.Load(); n != 8 {
		t.Errorf("%d bodies closed, want 8", n)
	}
}

func testPastFraming(t *testing.T, base string, roots *x509.CertPool, data []byte) {
	t.Helper()
	cl := &http.Client{Transport: &http.Transport{DisableCompression: true, TLSClientConfig: &tls.Config{RootCAs: roots}}}
	for _, tc := range []struct {
		method, query string
		want          []byte
		closes        bool
	}{
		{"GET", "off=0", data, true},
		{"GET", "off=5", data[5:], true},
		{"GET", "off=3&copy", data[3:], true},
		{"HEAD", "off=0", data, true},
		{"HEAD", "off=0&nobody", data, true},
		{"GET", "off=7&small", data[7:1007], false},
	} {
		req, _ := http.NewRequest(tc.method, base+tc.query, nil)
		resp, err := cl.Do(req)
		if err != nil {
			t.Fatalf("%s %s%s: %v", tc.method, base, tc.query, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("%s %s: body: %v", tc.method, tc.query, err)
		}
		if resp.StatusCode != 206 || resp.Header.Get("X-After") == "" {
			t.Errorf("%s %s: status %d, X-After %q", tc.method, tc.query, resp.StatusCode, resp.Header.Get("X-After"))
		}
		if resp.ContentLength != int64(len(tc.want)) {
			t.Errorf("%s %s: Content-Length %d, want %d", tc.method, tc.query, resp.ContentLength, len(tc.want))
		}
		if tc.method == "GET" && !bytes.Equal(body, tc.want) {
			t.Errorf("%s %s: %d bytes, not the body's %d", tc.method, tc.query, len(body), len(tc.want))
		}
		if tc.method == "HEAD" && len(body) != 0 {
			t.Errorf("HEAD %s: a body of %d bytes", tc.query, len(body))
		}
		if resp.Close != tc.closes {
			t.Errorf("%s %s: connection closed %v, want %v", tc.method, tc.query, resp.Close, tc.closes)
		}
	}
}

type atomicCloser struct{ n atomic.Int32 }

func (c *atomicCloser) Close() error { c.n.Add(1); return nil }
