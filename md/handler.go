package md

import (
	"bytes"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/internal/objhttp"
	"shoal/wire"
)

var prefixInternal = []byte(wire.Prefix)

// Handler returns md's request handler. Namespace methods (PROPFIND,
// MKCOL, DELETE, MOVE, COPY) are always answered by md itself.
func (s *Server) Handler() fasthttp.RequestHandler {
	return objhttp.Nosniff(s.serve)
}

func (s *Server) serve(ctx *fasthttp.RequestCtx) {
	raw := ctx.Request.URI().PathOriginal()
	if bytes.HasPrefix(raw, prefixInternal) {
		p := raw
		if i := indexByte(p, '?'); i >= 0 {
			p = p[:i]
		}
		s.api.Serve(ctx, string(p))
		return
	}
	if len(s.opts.AllowedHosts) > 0 && !s.hostAllowed(ctx.Host()) {
		fail(ctx, "Host", shoal.KindInvalid, "this server does not answer for that Host")
		return
	}
	if !s.admit(ctx) {
		s.finish(ctx)
		return
	}
	s.dispatch(ctx)
	s.finish(ctx)
}

func (s *Server) dispatch(ctx *fasthttp.RequestCtx) {
	m := ctx.Method()
	switch string(m) { // the compiler does not allocate for a switch on string(bytes)
	case "HEAD":
		s.handleHead(ctx)
	case "GET":
		s.handleGet(ctx)
	case "PROPFIND":
		s.handlePropfind(ctx)
	case "PUT":
		s.handlePut(ctx)
	case "OPTIONS":
		s.handleOptions(ctx)
	case "MKCOL":
		s.handleMkcol(ctx)
	case "DELETE":
		s.handleDelete(ctx)
	case "MOVE":
		s.handleMoveCopy(ctx, true)
	case "COPY":
		s.handleCopy(ctx)
	case "PROPPATCH":
		s.handleProppatch(ctx)
	case "LOCK":
		s.handleLock(ctx)
	case "UNLOCK":
		s.handleUnlock(ctx)
	case "POST":
		if s.macaroonRequest(ctx) {
			return
		}
		objhttp.CloseUnread(ctx)
		fail(ctx, "POST", shoal.KindNotAllowed, "POST is not supported here")
		ctx.Response.Header.SetBytesKV(hdrAllow, valAllow)
	default:
		objhttp.CloseUnread(ctx)
		fail(ctx, string(m), shoal.KindNotAllowed, "method not supported")
		ctx.Response.Header.SetBytesKV(hdrAllow, valAllow)
	}
}
