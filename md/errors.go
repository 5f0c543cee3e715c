package md

import (
	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/internal/httperr"
)

// fail answers an error md finds itself with the one error writer
// (httperr.Write: the kind's status, X-Shoal-Kind, Retry-After on 503).
func fail(ctx *fasthttp.RequestCtx, op string, kind shoal.Kind, reason string) {
	httperr.Write(ctx, shoal.Errorf(op, kind, "%s", reason))
}
