package httperr

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime/debug"

	"github.com/valyala/fasthttp"

	"shoal"
)

// Recover answers a request whose handler h panics with 500 "internal
// error" and logs the panic with its stack, where fasthttp, unlike
// net/http, would let it end the process: one request that meets a bug
// must not take down every other (and in shoal all, the data server with
// md). after, if not nil, runs once the 500 is set (md writes the
// request's access line there). Every shoal server is made with it
// (objhttp.NewHTTPServer, md's NewHTTPServer). A body sent after the
// handler returns is covered by StreamWriter and Body, as net/http covers
// a handler writing its body itself.
func Recover(h fasthttp.RequestHandler, after func(*fasthttp.RequestCtx)) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		defer func() {
			if v := recover(); v != nil {
				logPanic("request handler panicked", ctx.Method(), v)
				ctx.Response.Reset()
				ctx.SetConnectionClose()
				Write(ctx, shoal.E("http", shoal.KindOther))
				if after != nil {
					after(ctx)
				}
			}
		}()
		h(ctx)
	}
}

// logPanic logs a recovered panic: the method, never the URL (it may carry
// a signature) nor a header.
func logPanic(msg string, method []byte, v any) {
	slog.Error(msg, "method", string(method), "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
}

// StreamWriter sets sw as ctx's body stream writer, which fasthttp runs
// in a goroutine of its own once the handler has returned: a panic there
// is logged and closes the connection, so that the client sees the
// answer cut short (no last chunk), never a complete one, and the process
// goes on.
func StreamWriter(ctx *fasthttp.RequestCtx, sw fasthttp.StreamWriter) {
	conn, method := ctx.Conn(), string(ctx.Method())
	ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
		defer func() {
			if v := recover(); v != nil {
				logPanic("response stream panicked", []byte(method), v)
				conn.Close()
			}
		}()
		sw(w)
	})
}

// Body guards r, a response body read after the handler has returned: a
// panic in its Read or Close is logged with its stack and becomes an
// error, which ends the answer short and the connection (the client sees
// a body shorter than its Content-Length, or no last chunk). fasthttp
// recovers a panic in a body it frames itself, without the stack, but not
// in one netguard.SetBody copies on a hijacked connection (past fasthttp's
// framing: 2 GiB and more on 32-bit), where it would end the process.
func Body(ctx *fasthttp.RequestCtx, r io.Reader) io.ReadCloser {
	return &guardedBody{r: r, conn: ctx.Conn(), method: string(ctx.Method())}
}

type guardedBody struct {
	r      io.Reader
	conn   net.Conn
	method string
}

func (b *guardedBody) Read(p []byte) (n int, err error) {
	defer b.recover(&err)
	return b.r.Read(p)
}

func (b *guardedBody) Close() (err error) {
	defer b.recover(&err)
	if c, ok := b.r.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

func (b *guardedBody) recover(err *error) {
	if v := recover(); v != nil {
		logPanic("response body panicked", []byte(b.method), v)
		b.conn.Close()
		*err = shoal.E("http", shoal.KindOther)
	}
}
