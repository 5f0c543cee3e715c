package diskserver

import (
	"encoding/json"
	"io"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/internal/httperr"
	"shoal/sign"
	"shoal/wire"
)

// maxCallBody bounds the body of an internal call.
const maxCallBody = 1 << 20

// verifyCall reads the (small) body of an internal POST and checks its
// signature headers.
func (s *Server) verifyCall(ctx *fasthttp.RequestCtx) error {
	const op = "diskserver"
	if !ctx.IsPost() {
		return shoal.Errorf(op, shoal.KindNotAllowed, "internal endpoints take POST")
	}
	body, err := io.ReadAll(io.LimitReader(ctx.RequestBodyStream(), maxCallBody+1))
	if err != nil {
		return shoal.Errorf(op, shoal.KindInvalid, "reading body: %v", err)
	}
	if len(body) > maxCallBody {
		return shoal.Errorf(op, shoal.KindTooLarge, "internal call body over %d bytes", maxCallBody)
	}
	h := &ctx.Request.Header
	return wire.Verify(s.opts.Keys, fasthttp.MethodPost, string(ctx.Path()), body,
		string(h.Peek(sign.HeaderKeyID)), string(h.Peek(sign.HeaderExpiry)), string(h.Peek(sign.HeaderSig)))
}

// serveObjectList answers wire.PathObjects with the store's inventory, for fsck.
func (s *Server) serveObjectList(ctx *fasthttp.RequestCtx) {
	if err := s.verifyCall(ctx); err != nil {
		httperr.Write(ctx, err)
		return
	}
	list := wire.ObjectList{Objects: []shoal.ObjectInfo{}}
	err := s.store.Walk(ctx, func(o shoal.ObjectInfo) error {
		list.Objects = append(list.Objects, o)
		return nil
	})
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	writeJSON(ctx, list)
}

// serveSpace answers wire.PathSpace with the store's shoal.Space.
func (s *Server) serveSpace(ctx *fasthttp.RequestCtx) {
	if err := s.verifyCall(ctx); err != nil {
		httperr.Write(ctx, err)
		return
	}
	sp, err := s.store.Space(ctx)
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	writeJSON(ctx, sp)
}

func writeJSON(ctx *fasthttp.RequestCtx, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		httperr.Write(ctx, shoal.E("diskserver", err))
		return
	}
	ctx.SetContentType("application/json")
	ctx.SetBody(b)
}
