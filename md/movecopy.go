package md

import (
	"time"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/dav"
	"shoal/internal/httperr"
)

var (
	hdrDestination = []byte("Destination")
	hdrOverwrite   = []byte("Overwrite")
)

// parseDestination is dav.ParseDestination refusing a path under
// wire.Prefix.
func parseDestination(h []byte) (string, error) {
	dst, err := dav.ParseDestination(h)
	if err == nil && isInternal(dst) {
		return "", shoal.Errorf("Destination", shoal.KindPermission, "destination is reserved")
	}
	return dst, err
}

// handleMoveCopy answers MOVE and COPY: 201 when the destination was
// created, 204 when it was overwritten; 412 with Overwrite: F on an
// existing destination; 409 when its parent is missing; 403 when source
// and destination are the same or the destination lies inside the source.
// COPY with Depth: 0 on a collection copies the collection and its dead
// properties without members (RFC 4918 9.8.3); MOVE accepts only
// Depth: infinity.
func (s *Server) handleMoveCopy(ctx *fasthttp.RequestCtx, move bool) {
	op := "COPY"
	if move {
		op = "MOVE"
	}
	src, _, err := requestPath(ctx)
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	if move && s.foreignDestination(ctx) {
		fail(ctx, op, shoal.KindBadGateway, "MOVE to another server is not supported: COPY there (a third-party copy), then DELETE here")
		return
	}
	dst, err := parseDestination(ctx.Request.Header.PeekBytes(hdrDestination))
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	overwrite, err := dav.ParseOverwrite(dav.TrimSpace(ctx.Request.Header.PeekBytes(hdrOverwrite)))
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	overwrite = overwrite && !createOnly(ctx) // the principal may not replace the destination
	shallow := false
	switch d, ok := dav.ParseDepth(ctx.Request.Header.PeekBytes(hdrDepth)); {
	case ok && d == dav.DepthInfinity:
	case ok && !move && d == 0:
		shallow = true
	default:
		fail(ctx, op, shoal.KindInvalid, "bad Depth header")
		return
	}
	if src == "/" {
		fail(ctx, op, shoal.KindPermission, "cannot "+op+" the root")
		return
	}
	if src == dst {
		fail(ctx, op, shoal.KindPermission, "source and destination are the same")
		return
	}
	if shoal.IsWithin(dst, src) {
		fail(ctx, op, shoal.KindPermission, "destination lies inside the source")
		return
	}
	if move {
		err = s.checkWrite(ctx, src, true)
	} else if h := ctx.Request.Header.PeekBytes(hdrIf); len(h) > 0 {
		err = s.checkWrite(ctx, src, false) // COPY reads src: only the If conditions apply
	}
	if err == nil {
		err = s.checkConditions(ctx, src)
	}
	if err == nil {
		err = s.checkDestination(ctx, dst)
	}
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	grace := time.Now().Add(s.opts.URLTTL)
	var created bool
	switch {
	case move:
		created, err = s.cat.Move(s.base, src, dst, overwrite, grace)
	case shallow:
		created, err = s.copyShallow(ctx, src, dst, overwrite, grace)
	default:
		created, err = s.cat.Copy(s.base, src, dst, overwrite, grace)
	}
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	if created {
		ctx.SetStatusCode(fasthttp.StatusCreated)
	} else {
		ctx.SetStatusCode(fasthttp.StatusNoContent)
	}
}

// copyShallow is COPY Depth: 0: a file is copied whole; a collection
// becomes a new empty collection with the source's dead properties.
func (s *Server) copyShallow(ctx *fasthttp.RequestCtx, src, dst string, overwrite bool, grace time.Time) (bool, error) {
	e, err := s.cat.Stat(s.base, src)
	if err != nil {
		return false, err
	}
	if !e.IsDir {
		return s.cat.Copy(s.base, src, dst, overwrite, grace)
	}
	props, err := s.cat.Props(s.base, src)
	if err != nil {
		return false, err
	}
	created := true
	if _, err := s.cat.Stat(s.base, dst); err == nil {
		if !overwrite {
			return false, shoal.Errorf("COPY", shoal.KindPrecondition, "destination exists (Overwrite: F)")
		}
		if err := s.cat.Remove(s.base, dst, grace); err != nil {
			return false, err
		}
		created = false
	} else if !shoal.IsKind(err, shoal.KindNotFound) {
		return false, err
	}
	if _, err := s.cat.Mkdir(s.base, dst, time.Now()); err != nil {
		return false, err
	}
	if len(props) > 0 {
		if err := s.cat.PatchProps(s.base, dst, props, nil); err != nil {
			return false, err
		}
	}
	return created, nil
}
