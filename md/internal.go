package md

import (
	"encoding/json"
	"time"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/internal/httperr"
	"shoal/wire"
)

// DefaultMaxInternalBody bounds an internal call's body (commits,
// heartbeats, garbage lists and admin requests are a few kB).
const DefaultMaxInternalBody = 256 << 10

// handleInternal serves md's internal API: signed POSTs with JSON bodies.
// A bad signature is 403; an unknown path 404.
func (s *Server) handleInternal(ctx *fasthttp.RequestCtx, path string) {
	const op = "internal"
	if !ctx.IsPost() {
		fail(ctx, op, shoal.KindPermission, wire.Prefix+" is reserved for md's internal API (signed POSTs)")
		return
	}
	body, err := wire.ReadCall(ctx, s.keys, s.replays, s.opts.MaxInternalBody)
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	switch path {
	case wire.PathCommit:
		s.internalCommit(ctx, body)
	case wire.PathHeartbeat:
		s.internalHeartbeat(ctx, body)
	case wire.PathGarbage:
		s.internalGarbage(ctx, body)
	case wire.PathGarbageOK:
		s.internalGarbageDone(ctx, body)
	case wire.PathAbort:
		var req wire.AbortRequest
		err := decode(body, &req)
		if err == nil {
			err = s.cat.AbortUpload(s.base, req.Upload)
		}
		s.noContent(ctx, err)
	case wire.PathAdminServers:
		s.adminServers(ctx)
	default:
		if !s.handleAdminQuota(ctx, path, body) && !s.handleAdminOps(ctx, path, body) {
			fail(ctx, op, shoal.KindNotFound, "no such internal endpoint")
		}
	}
}

func decode(body []byte, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		return shoal.Errorf("internal", shoal.KindInvalid, "bad JSON: %v", err)
	}
	return nil
}

func (s *Server) replyJSON(ctx *fasthttp.RequestCtx, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		httperr.Write(ctx, shoal.E("internal", err))
		return
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.SetBody(b)
}

// internalCommit makes a durable upload visible: 201 new file, 204
// replaced (with a CommitReply body all the same: fasthttp sends no body
// with 204, so the data server reads created from the status).
func (s *Server) internalCommit(ctx *fasthttp.RequestCtx, body []byte) {
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
	e, err := s.cat.FinishUpload(s.base, c, now.Add(s.opts.URLTTL))
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	status := fasthttp.StatusNoContent
	if created(e) {
		status = fasthttp.StatusCreated
	}
	etag := e.ETag()
	ctx.Response.Header.Set("ETag", etag)
	s.replyJSON(ctx, status, wire.CommitReply{Path: e.Path, ETag: etag, Created: status == fasthttp.StatusCreated})
}

// internalHeartbeat registers a data server or refreshes it; a new server
// starts active, a known one keeps its state.
func (s *Server) internalHeartbeat(ctx *fasthttp.RequestCtx, body []byte) {
	var hb wire.Heartbeat
	if err := decode(body, &hb); err != nil {
		httperr.Write(ctx, err)
		return
	}
	if hb.ID == "" || hb.URL == "" {
		fail(ctx, "heartbeat", shoal.KindInvalid, "id and url are required")
		return
	}
	err := s.placement.Heartbeat(s.base, &shoal.Server{ID: hb.ID, URL: hb.URL, Pool: hb.Pool, Free: hb.Free, Total: hb.Total}, func() error {
		if len(hb.Uploads) == 0 {
			return nil
		}
		return s.cat.RenewUploads(s.base, hb.Uploads[:min(len(hb.Uploads), wire.MaxHeartbeatUploads)], time.Now().Add(s.opts.UploadTTL))
	})
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	ctx.SetStatusCode(fasthttp.StatusNoContent)
}

func (s *Server) internalGarbage(ctx *fasthttp.RequestCtx, body []byte) {
	var req wire.GarbageRequest
	if err := decode(body, &req); err != nil {
		httperr.Write(ctx, err)
		return
	}
	if req.Limit <= 0 || req.Limit > 10000 {
		req.Limit = 1000
	}
	items, err := s.cat.Garbage(s.base, req.Server, time.Now(), req.Limit)
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	reply := wire.GarbageReply{Items: make([]wire.GarbageItem, 0, len(items))}
	for _, g := range items {
		reply.Items = append(reply.Items, wire.GarbageItem{ID: g.ID, Object: g.Object})
	}
	s.replyJSON(ctx, fasthttp.StatusOK, reply)
}

func (s *Server) internalGarbageDone(ctx *fasthttp.RequestCtx, body []byte) {
	var req wire.GarbageDone
	if err := decode(body, &req); err != nil {
		httperr.Write(ctx, err)
		return
	}
	if err := s.cat.DropGarbage(s.base, req.IDs); err != nil {
		httperr.Write(ctx, err)
		return
	}
	ctx.SetStatusCode(fasthttp.StatusNoContent)
}

func (s *Server) adminServers(ctx *fasthttp.RequestCtx) {
	servers, err := s.cat.Servers(s.base)
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	s.replyJSON(ctx, fasthttp.StatusOK, servers)
}
