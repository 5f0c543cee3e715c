package md

import (
	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/internal/httperr"
	"shoal/wire"
)

// handleAdminQuota serves the quota endpoints; false if path is not one.
func (s *Server) handleAdminQuota(ctx *fasthttp.RequestCtx, path string, body []byte) bool {
	switch path {
	case wire.PathAdminQuotas:
		qs, err := s.cat.Quotas(s.base)
		if err != nil {
			httperr.Write(ctx, err)
			return true
		}
		if qs == nil {
			qs = []shoal.Quota{}
		}
		s.replyJSON(ctx, fasthttp.StatusOK, qs)
	case wire.PathAdminQuotaSet:
		var req wire.QuotaSetRequest
		err := decode(body, &req)
		var dir string
		if err == nil {
			dir, _, err = shoal.CleanPath(req.Dir)
		}
		var q shoal.Quota
		if err == nil {
			q, err = s.cat.SetQuota(s.base, dir, req.Bytes, req.Files)
		}
		if err != nil {
			httperr.Write(ctx, err)
			return true
		}
		s.replyJSON(ctx, fasthttp.StatusOK, q)
	case wire.PathAdminQuotaRm:
		var req wire.QuotaDirRequest
		err := decode(body, &req)
		var dir string
		if err == nil {
			dir, _, err = shoal.CleanPath(req.Dir)
		}
		if err == nil {
			err = s.cat.RemoveQuota(s.base, dir)
		}
		s.noContent(ctx, err)
	default:
		return false
	}
	return true
}
