package internalapi

import (
	"time"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/internal/httperr"
	"shoal/wire"
)

// The calls of data servers and gws: commits, heartbeats, garbage.

// commit makes a durable upload visible: 201 new file, 204 replaced
// (with a CommitReply body all the same: fasthttp sends no body with
// 204, so the data server reads created from the status).
func (a *API) commit(ctx *fasthttp.RequestCtx, body []byte) {
	var req wire.CommitRequest
	if err := decode(body, &req); err != nil {
		httperr.Write(ctx, err)
		return
	}
	c, err := req.ToCommit()
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	now := time.Now()
	if c.MTime.IsZero() {
		c.MTime = now
	}
	e, err := a.cat.FinishUpload(a.base, c, now.Add(a.cfg.Grace))
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	status := fasthttp.StatusNoContent
	if e.Version <= 1 { // a new file; a replaced one keeps its ID and gets Version+1
		status = fasthttp.StatusCreated
	}
	etag := e.ETag()
	ctx.Response.Header.Set("ETag", etag)
	replyJSON(ctx, status, wire.CommitReply{Path: e.Path, ETag: etag, Created: status == fasthttp.StatusCreated})
}

// heartbeat registers a data server or gw, or refreshes it, and renews
// the uploads it is receiving (see placement.View.Heartbeat).
func (a *API) heartbeat(ctx *fasthttp.RequestCtx, body []byte) {
	var hb wire.Heartbeat
	if err := decode(body, &hb); err != nil {
		httperr.Write(ctx, err)
		return
	}
	if hb.ID == "" || hb.URL == "" {
		httperr.Write(ctx, shoal.Errorf("heartbeat", shoal.KindInvalid, "id and url are required"))
		return
	}
	err := a.cfg.Placement.Heartbeat(a.base, &shoal.Server{ID: hb.ID, URL: hb.URL, Pool: hb.Pool, Free: hb.Free, Total: hb.Total}, func() error {
		if len(hb.Uploads) == 0 {
			return nil
		}
		return a.cat.RenewUploads(a.base, hb.Uploads[:min(len(hb.Uploads), wire.MaxHeartbeatUploads)], time.Now().Add(a.cfg.UploadTTL))
	})
	if shoal.KindOf(err) == shoal.KindPermission && a.refusals.due(hb.ID, time.Now()) {
		a.cfg.Log.Warn("heartbeat refused: the server does not become live", "server", hb.ID, "url", hb.URL, "err", err)
	}
	noContent(ctx, err)
}

func (a *API) garbage(ctx *fasthttp.RequestCtx, body []byte) {
	var req wire.GarbageRequest
	if err := decode(body, &req); err != nil {
		httperr.Write(ctx, err)
		return
	}
	if req.Limit <= 0 || req.Limit > 10000 {
		req.Limit = 1000
	}
	items, err := a.cat.Garbage(a.base, req.Server, time.Now(), req.Limit)
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	reply := wire.GarbageReply{Items: make([]wire.GarbageItem, 0, len(items))}
	for _, g := range items {
		reply.Items = append(reply.Items, wire.GarbageItem{ID: g.ID, Object: g.Object})
	}
	replyJSON(ctx, fasthttp.StatusOK, reply)
}

func (a *API) garbageDone(ctx *fasthttp.RequestCtx, body []byte) {
	var req wire.GarbageDone
	if err := decode(body, &req); err != nil {
		httperr.Write(ctx, err)
		return
	}
	noContent(ctx, a.cat.DropGarbage(a.base, req.IDs))
}
