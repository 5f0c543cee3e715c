package netguard

import (
	"io"
	"net/http"
	"testing"

	"github.com/valyala/fasthttp"

	"shoal/internal/httperr"
	"shoal/internal/testhttp"
)

// panicReader gives ten bytes, then meets a bug.
type panicReader struct{ sent bool }

func (r *panicReader) Read(p []byte) (int, error) {
	if r.sent {
		panic("a bug in a body")
	}
	r.sent = true
	return copy(p, "ten bytes!"), nil
}

// TestBodyPanicCutsAnswer: a response body guarded by httperr.Body whose
// Read panics after the handler returned cuts that answer short — framed
// by fasthttp with a length or chunked, or past its framing and copied on
// the hijacked connection (where nothing else would recover the panic:
// the process would end) — and the server answers the next request.
func TestBodyPanicCutsAnswer(t *testing.T) {
	defer func(m int64) { maxFramed = m }(maxFramed)
	maxFramed = 4096
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		switch string(ctx.Path()) {
		case "/sized":
			SetBody(ctx, httperr.Body(ctx, &panicReader{}), 100)
		case "/chunked":
			ctx.SetBodyStream(httperr.Body(ctx, &panicReader{}), -1)
		case "/hijacked":
			SetBody(ctx, httperr.Body(ctx, &panicReader{}), maxFramed+100)
		default:
			ctx.SetBodyString("ok")
		}
	}}
	ln, url := testhttp.Listen(t)
	go srv.Serve(Listen(ln, Limits{}))
	defer srv.Shutdown()
	for _, p := range []string{"/sized", "/chunked", "/hijacked"} {
		res, err := http.Get(url + p)
		if err != nil {
			continue // cut before the status line: cut all the same
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err == nil {
			t.Errorf("GET %s: %d, %q read whole; want the body cut", p, res.StatusCode, body)
		}
	}
	if st, _, body := testhttp.Do(t, "GET", url+"/ok", nil, nil); st != 200 || string(body) != "ok" {
		t.Errorf("the next request: %d %q", st, body)
	}
}
