package md

import (
	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/internal/httperr"
	"shoal/wire"
)

// handleAdminOps serves the pool endpoints and the jobs'; false if path
// is not one.
func (s *Server) handleAdminOps(ctx *fasthttp.RequestCtx, path string, body []byte) bool {
	switch path {
	case wire.PathAdminPools:
		pools, err := s.cat.Pools(s.base)
		if err == nil {
			s.replyJSON(ctx, fasthttp.StatusOK, pools)
			return true
		}
		httperr.Write(ctx, err)
	case wire.PathAdminPoolAdd:
		var req wire.PoolAddRequest
		err := decode(body, &req)
		var l shoal.Layout
		if err == nil {
			l, err = shoal.ParseLayout(req.Layout)
		}
		if err == nil {
			err = s.cat.PutPool(s.base, shoal.Pool{Name: req.Name, Layout: l})
		}
		s.noContent(ctx, err)
	case wire.PathAdminPoolSet:
		var req wire.PoolSetRequest
		err := decode(body, &req)
		if err == nil {
			err = s.setDirPool(req.Dir, req.Pool)
		}
		s.noContent(ctx, err)
	default:
		return s.handleAdminJobs(ctx, path, body)
	}
	return true
}

// setDirPool maps a clean directory path to a pool.
func (s *Server) setDirPool(dir, pool string) error {
	clean, _, err := shoal.CleanPath(dir)
	if err != nil {
		return err
	}
	return s.cat.SetDirPool(s.base, clean, pool)
}

func (s *Server) noContent(ctx *fasthttp.RequestCtx, err error) {
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	ctx.SetStatusCode(fasthttp.StatusNoContent)
}
