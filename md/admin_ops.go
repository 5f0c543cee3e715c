package md

import (
	"context"
	"strings"

	"github.com/valyala/fasthttp"

	"shoal"
)

// Admin endpoints for pools and the operations (signed POSTs, JSON).
const (
	PathAdminPools   = "/.shoal/admin/pools"    // {} → []shoal.Pool
	PathAdminPoolAdd = "/.shoal/admin/pool/add" // PoolAddRequest → 204
	PathAdminPoolSet = "/.shoal/admin/pool/set" // PoolSetRequest → 204
	PathAdminRepair  = "/.shoal/admin/repair"   // {} → RepairReport
	PathAdminDrain   = "/.shoal/admin/drain"    // DrainRequest → DrainReport
	PathAdminScrub   = "/.shoal/admin/scrub"    // ScrubRequest → ScrubReport
)

// PoolAddRequest creates a pool or changes its layout.
type PoolAddRequest struct {
	Name   string `json:"name"`
	Layout string `json:"layout"` // replica:N or ec:K+M
}

// PoolSetRequest maps a directory to a pool.
type PoolSetRequest struct {
	Dir  string `json:"dir"`
	Pool string `json:"pool"`
}

// DrainRequest names the server to drain.
type DrainRequest struct {
	Server string `json:"server"`
}

// ScrubRequest bounds the read rate (0: unbounded).
type ScrubRequest struct {
	RateMBps float64 `json:"rate_mb_per_s"`
}

// handleAdminOps serves the endpoints above; false if path is not one.
func (s *Server) handleAdminOps(ctx *fasthttp.RequestCtx, path string, body []byte) bool {
	switch path {
	case PathAdminPools:
		ps, err := s.pools()
		if err == nil {
			var pools []shoal.Pool
			if pools, err = ps.Pools(s.base); err == nil {
				s.replyJSON(ctx, fasthttp.StatusOK, pools)
				return true
			}
		}
		writeError(ctx, err)
	case PathAdminPoolAdd:
		var req PoolAddRequest
		err := decode(body, &req)
		var l shoal.Layout
		if err == nil {
			l, err = shoal.ParseLayout(req.Layout)
		}
		var ps shoal.PoolStore
		if err == nil {
			ps, err = s.pools()
		}
		if err == nil {
			err = ps.PutPool(s.base, shoal.Pool{Name: req.Name, Layout: l})
		}
		s.noContent(ctx, err)
	case PathAdminPoolSet:
		var req PoolSetRequest
		err := decode(body, &req)
		if err == nil {
			err = s.setDirPool(req.Dir, req.Pool)
		}
		s.noContent(ctx, err)
	case PathAdminRepair:
		tr := NewTracker("repair")
		s.runOp(ctx, tr, func(c context.Context) (any, error) { return s.Repair(c, tr) })
	case PathAdminDrain:
		var req DrainRequest
		if err := decode(body, &req); err != nil {
			writeError(ctx, err)
			return true
		}
		tr := NewTracker("drain")
		s.runOp(ctx, tr, func(c context.Context) (any, error) { return s.Drain(c, req.Server, tr) })
	case PathAdminScrub:
		var req ScrubRequest
		if len(body) > 0 {
			if err := decode(body, &req); err != nil {
				writeError(ctx, err)
				return true
			}
		}
		tr := NewTracker("scrub")
		s.runOp(ctx, tr, func(c context.Context) (any, error) { return s.Scrub(c, req.RateMBps, tr) })
	default:
		return false
	}
	return true
}

func (s *Server) pools() (shoal.PoolStore, error) {
	ps, ok := s.cat.(shoal.PoolStore)
	if !ok {
		return nil, shoal.Errorf("md.pools", shoal.KindUnsupported, "the catalog has no pools")
	}
	return ps, nil
}

// setDirPool maps a clean directory path to a pool.
func (s *Server) setDirPool(dir, pool string) error {
	ps, err := s.pools()
	if err != nil {
		return err
	}
	clean, _, err := shoal.CleanPath(dir)
	if err != nil {
		return err
	}
	return ps.SetDirPool(s.base, clean, pool)
}

func (s *Server) noContent(ctx *fasthttp.RequestCtx, err error) {
	if err != nil {
		writeError(ctx, err)
		return
	}
	ctx.SetStatusCode(fasthttp.StatusNoContent)
}

// report answers an operation's report, even when it stopped early: the
// error then travels in the report's status code only if nothing was done.
func (s *Server) report(ctx *fasthttp.RequestCtx, rep any, err error) {
	if err != nil {
		writeError(ctx, err)
		return
	}
	s.replyJSON(ctx, fasthttp.StatusOK, rep)
}

// PoolProp is the shoal property a PROPPATCH sets on a collection to map
// it to a pool (when Options.AllowPoolProppatch): <s:pool
// xmlns:s="http://shoal.dev/ns">NAME</s:pool>.
const (
	NamespaceShoal = "http://shoal.dev/ns"
	PoolPropName   = "pool"
)

// patchPool applies a shoal:pool property among a PROPPATCH's sets: it
// maps the collection to the pool (KindPermission unless allowed,
// KindNotDir on a file). Removing the property does not unmap.
func (s *Server) patchPool(e *shoal.Entry, set []shoal.Prop) error {
	for _, p := range set {
		if p.Space != NamespaceShoal || p.Name != PoolPropName {
			continue
		}
		if !s.opts.AllowPoolProppatch {
			return shoal.Errorf("PROPPATCH", shoal.KindPermission, "setting the pool by PROPPATCH is disabled (md.allow_pool_proppatch)")
		}
		if !e.IsDir {
			return shoal.Errorf("PROPPATCH", shoal.KindNotDir, "a pool is set on a collection")
		}
		if err := s.setDirPool(e.Path, strings.TrimSpace(p.Value)); err != nil {
			return err
		}
	}
	return nil
}
