package wire

import (
	"io"
	"time"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/sign"
)

// ReadCall authenticates an internal call (a signed POST) and returns its
// body. The headers are checked first: a call that is not correctly
// signed, or a replay, is refused without reading its body, and its
// connection closed. Then at most maxBody bytes are read and compared with
// the signed digest.
func ReadCall(ctx *fasthttp.RequestCtx, keys *sign.Keys, guard *ReplayGuard, maxBody int64) ([]byte, error) {
	const op = "internal"
	h := &ctx.Request.Header
	a := ReadCallAuth(func(k string) string { return string(h.Peek(k)) })
	if err := a.Verify(keys, string(h.Method()), string(ctx.Path()), guard, time.Now()); err != nil {
		ctx.SetConnectionClose()
		return nil, shoal.E(op, shoal.KindPermission, err)
	}
	if cl := h.ContentLength(); cl > int(maxBody) {
		ctx.SetConnectionClose()
		return nil, shoal.Errorf(op, shoal.KindTooLarge, "internal call body over %d bytes", maxBody)
	}
	var body []byte
	if r := ctx.RequestBodyStream(); r == nil {
		body = ctx.Request.Body() // a server that does not stream bodies read it already
	} else {
		var err error
		if body, err = io.ReadAll(io.LimitReader(r, maxBody+1)); err != nil {
			return nil, shoal.E(op, shoal.KindInvalid, err)
		}
		if int64(len(body)) > maxBody {
			ctx.SetConnectionClose()
			return nil, shoal.Errorf(op, shoal.KindTooLarge, "internal call body over %d bytes", maxBody)
		}
	}
	if err := a.CheckBody(body); err != nil {
		return nil, err
	}
	return body, nil
}
