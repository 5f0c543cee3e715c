// Package objhttp is the HTTP side that shoal's data servers (diskserver
// and gw) share for their object protocol on /obj/<id>: request checks,
// GET/HEAD range answers, PUT checksum headers and the commit to md, the
// body reader that refuses short or oversized uploads, and the lifecycle
// of background loops. What differs between the servers — where the bytes
// come from and go to — stays in each. Errors are answered with httperr.
//
// objhttp must not import md, diskserver, gw or ec.
package objhttp

import (
	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/internal/httperr"
	"shoal/internal/netguard"
)

// Allow lists the methods of /obj/<id>, sent with a 405 (COPY: a
// third-party copy md redirected here).
const Allow = "GET, HEAD, PUT, DELETE, COPY"

// Check validates the object id and the method of a request on
// /obj/<id> and returns the method. When it returns false it has answered:
// 400 for a bad id, 405 with Allow for another method.
func Check(ctx *fasthttp.RequestCtx, op, id string) (string, bool) {
	if !shoal.ValidObjectID(id) {
		httperr.Write(ctx, shoal.Errorf(op, shoal.KindInvalid, "bad object id"))
		return "", false
	}
	method := string(ctx.Method())
	switch method {
	case fasthttp.MethodGet, fasthttp.MethodHead, fasthttp.MethodPut, fasthttp.MethodDelete, MethodCopy:
		return method, true
	}
	httperr.Write(ctx, shoal.Errorf(op, shoal.KindNotAllowed, "%s not allowed on objects", method))
	ctx.Response.Header.Set("Allow", Allow) // after httperr.Write, which resets the headers
	return "", false
}

// MethodCopy is WebDAV's COPY: on an object, a third-party copy.
const MethodCopy = "COPY"

// QueryGetter reads ctx's query arguments, for sign.Keys.VerifyQuery.
func QueryGetter(ctx *fasthttp.RequestCtx) func(string) string {
	args := ctx.QueryArgs()
	return func(k string) string { return string(args.Peek(k)) }
}

// NewHTTPServer is the fasthttp server both data servers run: request
// bodies streamed (the handler enforces maxBody itself, since fasthttp
// only uses the limit to decide what to pre-read), no default content
// type, connections closed at Shutdown, and the timeouts of net (serve it
// on a netguard listener).
func NewHTTPServer(h fasthttp.RequestHandler, name string, maxBody int64, net netguard.Config) *fasthttp.Server {
	s := &fasthttp.Server{
		Handler:                      Nosniff(httperr.Recover(h, nil)),
		ErrorHandler:                 httperr.ReadError,
		Name:                         name,
		StreamRequestBody:            true,
		MaxRequestBodySize:           int(min(maxBody, int64(^uint(0)>>1))),
		DisablePreParseMultipartForm: true,
		NoDefaultContentType:         true,
		CloseOnShutdown:              true,
		SecureErrorLogMessage:        true, // fasthttp's own errors must not quote headers (Authorization)
	}
	net.Apply(s)
	return s
}

var (
	hdrNosniff = []byte("X-Content-Type-Options")
	valNosniff = []byte("nosniff")
)

// Nosniff sets X-Content-Type-Options: nosniff on every answer of h, so
// that no browser takes stored bytes served as application/octet-stream
// (or anything else) for HTML or script.
func Nosniff(h fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		h(ctx)
		ctx.Response.Header.SetBytesKV(hdrNosniff, valNosniff)
	}
}
