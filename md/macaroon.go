package md

import (
	"bytes"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/dav"
	"shoal/internal/objhttp"
)

var mediaMacaroonRequest = []byte("application/macaroon-request")

// macaroonRequest answers gfal2's request for a macaroon: before a
// transfer over davs it POSTs a small JSON document with Content-Type
// application/macaroon-request (dCache's delegation) and, on a refusal,
// goes on with the token or certificate it has. md has no macaroons to
// give: a prompt 415 with the reason, the body never read, let alone
// taken for an upload. It reports whether the request was one.
func (s *Server) macaroonRequest(ctx *fasthttp.RequestCtx) bool {
	ct := ctx.Request.Header.ContentType()
	if i := bytes.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	if !bytes.EqualFold(dav.TrimSpace(ct), mediaMacaroonRequest) {
		return false
	}
	objhttp.CloseUnread(ctx)
	fail(ctx, "POST", shoal.KindUnsupported, "macaroons are not supported here: use the bearer token (or certificate) directly")
	return true
}
