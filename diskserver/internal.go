package diskserver

import (
	"encoding/json"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/internal/httperr"
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
	_, err := wire.ReadCall(ctx, s.opts.Keys, s.replays, maxCallBody)
	return err
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
