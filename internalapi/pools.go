package internalapi

import (
	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/wire"
)

// servePools serves the pool endpoints; false if path is not one.
func (a *API) servePools(ctx *fasthttp.RequestCtx, path string, body []byte) bool {
	switch path {
	case wire.PathAdminPools:
		pools, err := a.cat.Pools(a.base)
		answer(ctx, pools, err)
	case wire.PathAdminPoolAdd:
		var req wire.PoolAddRequest
		err := decode(body, &req)
		var l shoal.Layout
		if err == nil {
			l, err = shoal.ParseLayout(req.Layout)
		}
		if err == nil {
			err = a.cat.PutPool(a.base, shoal.Pool{Name: req.Name, Layout: l})
		}
		noContent(ctx, err)
	case wire.PathAdminPoolSet:
		var req wire.PoolSetRequest
		err := decode(body, &req)
		if err == nil {
			var dir string
			if dir, _, err = shoal.CleanPath(req.Dir); err == nil {
				err = a.cat.SetDirPool(a.base, dir, req.Pool)
			}
		}
		noContent(ctx, err)
	default:
		return false
	}
	return true
}
