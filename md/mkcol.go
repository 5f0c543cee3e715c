package md

import (
	"time"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/internal/httperr"
	"shoal/internal/objhttp"
)

// hasBody reports whether the request announces a body.
func hasBody(ctx *fasthttp.RequestCtx) bool {
	return ctx.Request.Header.ContentLength() > 0 || ctx.Request.Header.ContentLength() == -1
}

// handleMkcol creates a collection: 201; 405 if the path exists; 409 if
// the parent is missing or a file; 415 for a body (RFC 4918 9.3: md knows
// no MKCOL body format).
func (s *Server) handleMkcol(ctx *fasthttp.RequestCtx) {
	path, _, err := requestPath(ctx)
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	if hasBody(ctx) {
		objhttp.CloseUnread(ctx)
		fail(ctx, "MKCOL", shoal.KindUnsupported, "MKCOL with a body is not supported")
		return
	}
	if err := s.checkWrite(ctx, path, false); err != nil {
		httperr.Write(ctx, err)
		return
	}
	if _, err := s.cat.Mkdir(s.base, path, time.Now()); err != nil {
		if shoal.IsKind(err, shoal.KindNotDir) {
			err = shoal.Errorf("MKCOL", shoal.KindConflict, "parent is not a collection")
		}
		httperr.Write(ctx, err)
		return
	}
	ctx.SetStatusCode(fasthttp.StatusCreated)
}
