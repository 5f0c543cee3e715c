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
	if err := s.peers.verify(s.base, hb.URL); err != nil {
		fail(ctx, "heartbeat", shoal.KindPermission, err.Error())
		return
	}
	_, known, _ := s.placement.list(s.base)
	now := time.Now()
	// A heartbeat skipped renews no upload either: the next one written
	// (within ServerTTL/6) does, long before a reservation expires.
	if s.placement.skipHeartbeat(&hb, known[hb.ID], now, s.opts.ServerTTL/6) {
		s.placement.suspects.clear(hb.ID)
		ctx.SetStatusCode(fasthttp.StatusNoContent)
		return
	}
	state := shoal.ServerActive
	if old := known[hb.ID]; old != nil && old.State != "" {
		state = old.State
	}
	err := s.cat.PutServer(s.base, &shoal.Server{ID: hb.ID, URL: hb.URL, Pool: hb.Pool, State: state,
		Free: hb.Free, Total: hb.Total, LastSeen: now})
	if err == nil && len(hb.Uploads) > 0 {
		err = s.cat.RenewUploads(s.base, hb.Uploads[:min(len(hb.Uploads), wire.MaxHeartbeatUploads)], time.Now().Add(s.opts.UploadTTL))
	}
	// md's catalog clock stops while heartbeats cannot be written (see
	// catalogClock): the servers are not aged out for md's own outage.
	s.placement.clock.report(srcHeartbeat, err, time.Now())
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	s.placement.wroteHeartbeat(hb.ID, now)
	s.placement.suspects.clear(hb.ID)
	// A new server takes writes at once; one that moved (restarted on a new
	// URL), changed pool or came back from the dead must not be served
	// from the stale placement list until its next refresh.
	if old := known[hb.ID]; old == nil || old.URL != hb.URL || old.Pool != hb.Pool || !s.placement.live(old, time.Now()) {
		s.placement.invalidate()
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
