package internalapi

import (
	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/internal/httperr"
	"shoal/wire"
)

// serveQuota serves the quota endpoints; false if path is not one.
func (a *API) serveQuota(ctx *fasthttp.RequestCtx, path string, body []byte) bool {
	switch path {
	case wire.PathAdminQuotas:
		qs, err := a.cat.Quotas(a.base)
		if err != nil {
			httperr.Write(ctx, err)
			return true
		}
		if qs == nil {
			qs = []shoal.Quota{}
		}
		replyJSON(ctx, fasthttp.StatusOK, qs)
	case wire.PathAdminQuotaSet:
		var req wire.QuotaSetRequest
		err := decode(body, &req)
		var dir string
		if err == nil {
			dir, _, err = shoal.CleanPath(req.Dir)
		}
		var q shoal.Quota
		if err == nil {
			q, err = a.cat.SetQuota(a.base, dir, quotaLimit(req.Bytes), quotaLimit(req.Files))
		}
		if err != nil {
			httperr.Write(ctx, err)
			return true
		}
		replyJSON(ctx, fasthttp.StatusOK, q)
	case wire.PathAdminQuotaRm:
		var req wire.QuotaDirRequest
		err := decode(body, &req)
		var dir string
		if err == nil {
			dir, _, err = shoal.CleanPath(req.Dir)
		}
		if err == nil {
			err = a.cat.RemoveQuota(a.base, dir)
		}
		noContent(ctx, err)
	default:
		return false
	}
	return true
}

// quotaLimit is a limit of a QuotaSetRequest as SetQuota takes it: left
// out, shoal.QuotaKeep (the catalog merges it with the limit set, in its
// transaction). A negative one stays negative, so the catalog refuses it
// rather than a client's -1<<63 passing for "keep".
func quotaLimit(l *int64) int64 {
	switch {
	case l == nil:
		return shoal.QuotaKeep
	case *l < 0:
		return -1
	}
	return *l
}
