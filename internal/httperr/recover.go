package httperr

import (
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/valyala/fasthttp"

	"shoal"
)

// Recover answers a request whose handler h panics with 500 "internal
// error" and logs the panic with its stack, where fasthttp, unlike
// net/http, would let it end the process: one request that meets a bug
// must not take down every other (and in shoal all, the data server with
// md). It covers the handler only: a body stream or a hijacked answer
// runs after it returns. Every shoal server is made with it
// (objhttp.NewHTTPServer, md's NewHTTPServer).
func Recover(h fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		defer func() {
			if v := recover(); v != nil {
				slog.Error("request handler panicked", "method", string(ctx.Method()), "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				ctx.Response.Reset()
				ctx.SetConnectionClose()
				Write(ctx, shoal.E("http", shoal.KindOther))
			}
		}()
		h(ctx)
	}
}
