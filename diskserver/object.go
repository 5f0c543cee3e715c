package diskserver

import (
	"context"
	"encoding/hex"
	"time"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/internal/httperr"
	"shoal/internal/objhttp"
	"shoal/sign"
	"shoal/wire"
)

// serveObject handles PUT, GET, HEAD and DELETE on /obj/<id>.
func (s *Server) serveObject(ctx *fasthttp.RequestCtx, id string) {
	const op = "diskserver"
	method, ok := objhttp.Check(ctx, op, id)
	if !ok {
		return
	}
	if method == objhttp.MethodCopy {
		s.serveTPC(ctx, id)
		return
	}
	g, err := s.opts.Keys.VerifyObjectQuery(method, id, objhttp.QueryGetter(ctx), time.Now())
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	switch method {
	case fasthttp.MethodGet, fasthttp.MethodHead:
		s.serveGet(ctx, id)
	case fasthttp.MethodPut:
		s.servePut(ctx, id, g)
	case fasthttp.MethodDelete:
		if err := s.store.Remove(ctx, id); err != nil {
			httperr.Write(ctx, err)
			return
		}
		ctx.SetStatusCode(fasthttp.StatusNoContent)
	}
}

// servePut stores the body as object id (at most g.Max bytes, the bound
// of its URL) and, for an upload, commits it to md and relays md's
// answer (a failed commit removes the object); or, where the sender of
// the body commits (g.CallerCommits: md streaming a client's body),
// answers 201 with the commit it would have sent (wire.CommitRequest)
// once the object is durable.
func (s *Server) servePut(ctx *fasthttp.RequestCtx, id string, g sign.Grant) {
	const op = "diskserver.PUT"
	upload, reserved := g.Upload, g.Max
	if upload != "" && s.md == nil && !g.CallerCommits {
		httperr.Write(ctx, shoal.Errorf(op, shoal.KindUnavailable, "no md to commit to"))
		return
	}
	body, ok := objhttp.CheckSize(ctx, op, s.opts.MaxBodySize, reserved)
	if !ok {
		objhttp.Abort(s.md, upload, s.log.Warn)
		return
	}
	if upload != "" {
		defer s.active.Begin(upload)()
	}
	// Not the RequestCtx: fasthttp cancels it at Shutdown, which would abort
	// an upload in flight instead of letting it finish (graceful SIGTERM).
	info, sums, err := s.store.CreateSized(context.WithoutCancel(ctx), id, body, body.Want)
	if err != nil {
		if !shoal.IsKind(err, shoal.KindExist) { // else another request wrote this upload's object
			objhttp.Abort(s.md, upload, s.log.Warn)
		}
		objhttp.DrainRest(ctx, body)
		httperr.Write(ctx, err)
		return
	}
	objhttp.SetSums(ctx, info.Size, sums)
	if upload == "" {
		ctx.SetStatusCode(fasthttp.StatusCreated)
		return
	}
	req := wire.CommitRequest{
		Upload:  upload,
		Size:    info.Size,
		Adler32: wire.FormatAdler32(sums.Adler32),
		MD5:     hex.EncodeToString(sums.MD5),
		MTime:   info.ModTime.UnixNano(),
		Replicas: []wire.Replica{{
			Server: s.opts.ID, Object: id, Size: info.Size, Sum: sums.Adler32,
		}},
	}
	if g.CallerCommits {
		// md commits; if it cannot, the upload expires and its object
		// goes to the garbage queue.
		ctx.SetStatusCode(fasthttp.StatusCreated)
		writeJSON(ctx, req)
		return
	}
	objhttp.Commit(ctx, s.md, op, id, req, func() {
		if err := s.store.Remove(ctx, id); err != nil {
			s.log.Error("removing uncommitted object", "object", id, "err", err)
		}
	})
}
