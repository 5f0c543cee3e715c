package md

import (
	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/dav"
	"shoal/internal/httperr"
)

// Conditional requests (RFC 9110 §13, evaluated by dav.Conditions): a
// GET or HEAD answers 304 or 412 itself; a method that changes the
// namespace checks them just before acting (a PUT again in the
// transaction that makes its file visible: see shoal.Condition).

var (
	hdrIfMatch           = []byte("If-Match")
	hdrIfUnmodifiedSince = []byte("If-Unmodified-Since")
	hdrIfModifiedSince   = []byte("If-Modified-Since")
)

func requestConditions(h *fasthttp.RequestHeader) dav.Conditions {
	return dav.Conditions{
		IfMatch:           h.PeekBytes(hdrIfMatch),
		IfNoneMatch:       h.PeekBytes(hdrIfNoneMatch),
		IfUnmodifiedSince: h.PeekBytes(hdrIfUnmodifiedSince),
		IfModifiedSince:   h.PeekBytes(hdrIfModifiedSince),
	}
}

// notModified answers 304 with the validators GET would send.
func (s *Server) notModified(ctx *fasthttp.RequestCtx, e *shoal.Entry) {
	s.setEntryHeaders(ctx, e)
	ctx.Response.Header.SetContentTypeBytes(nil)
	ctx.Response.SkipBody = true
	ctx.SetStatusCode(fasthttp.StatusNotModified)
}

// checkConditions evaluates the request's conditional headers against the
// entry at path (stat'ed only when a conditional header is present), for a
// method that changes the namespace. KindPrecondition (412) when one fails.
func (s *Server) checkConditions(ctx *fasthttp.RequestCtx, path string) error {
	c := requestConditions(&ctx.Request.Header)
	if c.None() {
		return nil
	}
	e, err := s.stat(ctx, path)
	switch {
	case shoal.IsKind(err, shoal.KindNotFound), shoal.IsKind(err, shoal.KindNotDir):
		e = nil
	case err != nil:
		return err
	}
	return c.Evaluate(e, false)
}

// readConditions evaluates a GET's or HEAD's conditional headers against
// e and answers 304 or 412 itself; it reports whether to go on.
func (s *Server) readConditions(ctx *fasthttp.RequestCtx, e *shoal.Entry) bool {
	c := requestConditions(&ctx.Request.Header)
	switch err := c.Evaluate(e, true); {
	case err == nil, err == dav.ErrNotModified && e.IsDir: // a collection's ETag does not change with its children: a 304 kept listings stale
		return true
	case err == dav.ErrNotModified:
		s.notModified(ctx, e)
	default:
		httperr.Write(ctx, err)
	}
	return false
}
