package md

import (
	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/wire"
)

var (
	hdrRetryAfter = []byte("Retry-After")
	valFive       = []byte("5")
	ctTextPlain   = []byte("text/plain; charset=utf-8")
)

// writeError answers err: the status of its kind, its short reason as a
// text/plain body, and Retry-After on 503 (contract 4: the client retries
// while a backend is down).
func writeError(ctx *fasthttp.RequestCtx, err error) {
	kind := shoal.KindOf(err)
	status := kind.Status()
	if err == errLocked {
		status = fasthttp.StatusLocked
	}
	closeConn := ctx.Response.ConnectionClose() // set by who left the body unread
	ctx.Response.Reset()
	if closeConn {
		ctx.SetConnectionClose()
	}
	ctx.SetStatusCode(status)
	ctx.Response.Header.Set(wire.HeaderKind, kind.String())
	if status == fasthttp.StatusServiceUnavailable {
		ctx.Response.Header.SetBytesKV(hdrRetryAfter, valFive)
	}
	ctx.Response.Header.SetContentTypeBytes(ctTextPlain)
	ctx.SetBodyString(shoal.Reason(err) + "\n")
}

// fail is writeError for an error md finds itself.
func fail(ctx *fasthttp.RequestCtx, op string, kind shoal.Kind, reason string) {
	writeError(ctx, shoal.Errorf(op, kind, "%s", reason))
}
