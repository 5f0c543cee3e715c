package md

import (
	"time"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/dav"
	"shoal/internal/httperr"
)

var hdrDepth = []byte("Depth")

// handleDelete removes a file or a collection with everything below it:
// 204; 404 if missing. A Depth other than infinity is 400 (RFC 4918 9.6.1).
func (s *Server) handleDelete(ctx *fasthttp.RequestCtx) {
	path, _, err := requestPath(ctx)
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	if d := ctx.Request.Header.PeekBytes(hdrDepth); len(d) > 0 && !dav.EqualFold(d, "infinity") {
		fail(ctx, "DELETE", shoal.KindInvalid, "Depth must be infinity on DELETE")
		return
	}
	if path == "/" {
		fail(ctx, "DELETE", shoal.KindPermission, "cannot delete the root")
		return
	}
	if err := s.checkWrite(ctx, path, true); err != nil {
		httperr.Write(ctx, err)
		return
	}
	if err := s.checkConditions(ctx, path); err != nil {
		httperr.Write(ctx, err)
		return
	}
	if err := s.cat.Remove(s.base, path, time.Now().Add(s.opts.URLTTL)); err != nil {
		httperr.Write(ctx, err)
		return
	}
	ctx.SetStatusCode(fasthttp.StatusNoContent)
}
