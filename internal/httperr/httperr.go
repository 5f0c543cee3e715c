// Package httperr is the one error writer of shoal's HTTP servers: md, the
// data servers and the gws answer every error with Write, so every error
// answer has the status of its kind (shoal.Kind.Status), the kind itself
// in wire.HeaderKind (so clients need not guess it from the status),
// Retry-After on a 503 (DESIGN contract 4: the client retries while a
// backend is down), and the short reason as a text/plain body.
//
// It imports only fasthttp, the root package and wire.
package httperr

import (
	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/wire"
)

// RetryAfter is the Retry-After of every 503 and 429, in seconds.
const RetryAfter = "5"

var (
	hdrKind       = []byte(wire.HeaderKind)
	hdrRetryAfter = []byte("Retry-After")
	valRetryAfter = []byte(RetryAfter)
	ctTextPlain   = []byte("text/plain; charset=utf-8")
	ctXML         = []byte("application/xml; charset=utf-8")
	kindNames     = func() [][]byte { // by kind, so an answer allocates none
		var out [][]byte
		for k := shoal.KindOther; ; k++ {
			if _, ok := shoal.ParseKind(k.String()); !ok {
				return out
			}
			out = append(out, []byte(k.String()))
		}
	}()
)

// Write answers err: the status of its kind, the kind, Retry-After on a
// 503, and shoal.Reason(err) as a text/plain body — except a 507, whose
// body is the WebDAV error element of RFC 4331 §6 (DAV:quota-not-exceeded
// for KindQuota, DAV:sufficient-disk-space otherwise) with the reason in
// shoal's namespace (wire.ResponseError reads it back). Whatever the
// response held is dropped, except a Connection: close already decided
// (by a handler that left the request body unread).
func Write(ctx *fasthttp.RequestCtx, err error) {
	kind := shoal.KindOf(err)
	closeConn := ctx.Response.ConnectionClose()
	ctx.Response.Reset()
	if closeConn {
		ctx.SetConnectionClose()
	}
	SetKind(ctx, kind)
	if kind.Status() == fasthttp.StatusInsufficientStorage {
		ctx.Response.Header.SetContentTypeBytes(ctXML)
		ctx.SetBody(wire.InsufficientStorageBody(kind, shoal.Reason(err)))
		return
	}
	ctx.Response.Header.SetContentTypeBytes(ctTextPlain)
	ctx.SetBodyString(shoal.Reason(err) + "\n")
}

// SetKind sets what an error answer of kind carries besides its body: the
// status, the kind and, on a 503, Retry-After. For an answer with a body
// of its own (a WebDAV precondition's XML).
func SetKind(ctx *fasthttp.RequestCtx, kind shoal.Kind) {
	status := kind.Status()
	ctx.SetStatusCode(status)
	h := &ctx.Response.Header
	if int(kind) < len(kindNames) {
		h.SetBytesKV(hdrKind, kindNames[kind])
	} else {
		h.Set(wire.HeaderKind, kind.String())
	}
	if status == fasthttp.StatusServiceUnavailable || status == fasthttp.StatusTooManyRequests {
		h.SetBytesKV(hdrRetryAfter, valRetryAfter)
	}
}
