package objhttp

import (
	"testing"

	"github.com/valyala/fasthttp"

	"shoal/internal/netguard"
	"shoal/internal/testhttp"
)

// TestServerSurvivesPanic: a handler that panics on one request gets that
// request a 500 (with nosniff, like every answer), and the server answers
// the next: fasthttp alone would end the process.
func TestServerSurvivesPanic(t *testing.T) {
	srv := NewHTTPServer(func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) == "/boom" {
			ctx.SetBodyString("half an answer")
			panic("a bug")
		}
		ctx.SetBodyString("ok")
	}, "test", 1<<20, netguard.Config{})
	ln, url := testhttp.Listen(t)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Shutdown() })
	st, h, body := testhttp.Do(t, "GET", url+"/boom", nil, nil)
	if st != 500 || string(body) != "internal error\n" || h.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("the panicking request: %d %q, nosniff %q; want 500 internal error", st, body, h.Get("X-Content-Type-Options"))
	}
	if st, _, body := testhttp.Do(t, "GET", url+"/ok", nil, nil); st != 200 || string(body) != "ok" {
		t.Errorf("the next request: %d %q", st, body)
	}
}
