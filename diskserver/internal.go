package diskserver

import (
	"encoding/json"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/sign"
	"shoal/wire"
)

// verifyCall checks the signature headers of an internal POST.
func (s *Server) verifyCall(ctx *fasthttp.RequestCtx) error {
	if !ctx.IsPost() {
		return shoal.Errorf("diskserver", shoal.KindNotAllowed, "internal endpoints take POST")
	}
	h := &ctx.Request.Header
	return wire.Verify(s.opts.Keys, fasthttp.MethodPost, string(ctx.Path()), ctx.Request.Body(),
		string(h.Peek(sign.HeaderKeyID)), string(h.Peek(sign.HeaderExpiry)), string(h.Peek(sign.HeaderSig)))
}

// serveObjectList answers wire.PathObjects with the store's inventory, for fsck.
func (s *Server) serveObjectList(ctx *fasthttp.RequestCtx) {
	if err := s.verifyCall(ctx); err != nil {
		fail(ctx, err)
		return
	}
	list := wire.ObjectList{Objects: []shoal.ObjectInfo{}}
	err := s.store.Walk(ctx, func(o shoal.ObjectInfo) error {
		list.Objects = append(list.Objects, o)
		return nil
	})
	if err != nil {
		fail(ctx, err)
		return
	}
	writeJSON(ctx, list)
}

// serveSpace answers PathSpace with the store's shoal.Space.
func (s *Server) serveSpace(ctx *fasthttp.RequestCtx) {
	if err := s.verifyCall(ctx); err != nil {
		fail(ctx, err)
		return
	}
	sp, err := s.store.Space(ctx)
	if err != nil {
		fail(ctx, err)
		return
	}
	writeJSON(ctx, sp)
}

func writeJSON(ctx *fasthttp.RequestCtx, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		fail(ctx, shoal.E("diskserver", err))
		return
	}
	ctx.SetContentType("application/json")
	ctx.SetBody(b)
}
