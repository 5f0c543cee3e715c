package netguard

import (
	"io"
	"math"
	"net"
	"strconv"

	"github.com/valyala/fasthttp"
)

// maxFramed is the largest body fasthttp frames: it keeps a
// Content-Length in a native int, so on 32-bit platforms (linux/arm) a
// length of 2 GiB or more wraps — a 4 GiB + 100 B file went out as
// "Content-Length: 100" and its first 100 bytes, with a 200. A variable
// so that tests on 64-bit platforms can take the 32-bit path.
var maxFramed int64 = math.MaxInt

// SetBody sets ctx's response body to n bytes of body (closed after
// sending, if it is an io.Closer); a nil body sets the length alone, for
// a HEAD. A length fasthttp cannot frame is answered here on the hijacked
// connection instead: the header fasthttp would send, with the exact
// Content-Length and "Connection: close", then the body (with sendfile(2)
// for a FileBody on a guarded connection, under its write idle deadline).
// The response must be complete when the handler returns: status and
// headers set after SetBody are sent too.
func SetBody(ctx *fasthttp.RequestCtx, body io.Reader, n int64) {
	if n <= maxFramed {
		if body == nil {
			ctx.Response.Header.SetContentLength(int(n))
			return
		}
		ctx.SetBodyStream(body, int(n))
		return
	}
	conn, head := ctx.Conn(), ctx.IsHead()
	ctx.SetUserValue(hijackedKey{}, n)
	ctx.Response.Header.SetConnectionClose()
	ctx.HijackSetNoResponse(true)
	ctx.Hijack(func(net.Conn) {
		if c, ok := body.(io.Closer); ok {
			defer c.Close()
		}
		// fasthttp releases ctx only after this function returns.
		b := ctx.Response.Header.AppendBytes(nil)
		b = append(b[:len(b)-2], "Content-Length: "...) // before the blank line
		b = strconv.AppendInt(b, n, 10)
		b = append(b, "\r\n\r\n"...)
		if _, err := conn.Write(b); err != nil || head || body == nil {
			return
		}
		io.CopyN(conn, body, n) // a short body ends the connection early: the client sees it short
	})
}

type hijackedKey struct{}

// SentLength is the length of ctx's response body, for an access log: a
// stream's announced length, one SetBody answers itself, or the body's.
func SentLength(ctx *fasthttp.RequestCtx) int64 {
	if ctx.Response.IsBodyStream() {
		return int64(max(ctx.Response.Header.ContentLength(), 0))
	}
	if n, ok := ctx.UserValue(hijackedKey{}).(int64); ok {
		return n
	}
	return int64(len(ctx.Response.Body()))
}

// RequestLength is the length to give fasthttp for a request body of n
// bytes (n < 0: unknown): n, or -1 (chunked) where an int cannot hold it,
// so that a 32-bit client never announces a wrapped length.
func RequestLength(n int64) int {
	if n < 0 || n > maxFramed {
		return -1
	}
	return int(n)
}
