package gw

import (
	"encoding/hex"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/ec"
	"shoal/internal/httperr"
	"shoal/internal/netguard"
	"shoal/internal/objhttp"
	"shoal/wire"
)

// serveObject handles PUT, GET, HEAD and DELETE on /obj/<id>.
func (s *Server) serveObject(ctx *fasthttp.RequestCtx, id string) {
	method, ok := objhttp.Check(ctx, "gw", id)
	if !ok {
		return
	}
	if method == objhttp.MethodCopy {
		s.serveTPC(ctx, id)
		return
	}
	req, err := wire.VerifyGatewayURL(s.opts.Keys, method, id, objhttp.QueryGetter(ctx), time.Now())
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	store, err := s.storeFor(req)
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	switch method {
	case fasthttp.MethodGet, fasthttp.MethodHead:
		s.serveGet(ctx, store, id)
	case fasthttp.MethodPut:
		s.servePut(ctx, store, id, req)
	case fasthttp.MethodDelete:
		if err := store.Remove(ctx, id); err != nil {
			httperr.Write(ctx, err)
			return
		}
		ctx.SetStatusCode(fasthttp.StatusNoContent)
	}
}

// servePut encodes the body onto the shard servers and, with an upload id,
// commits one replica per shard to md and relays md's answer; a failed
// commit removes the shards.
func (s *Server) servePut(ctx *fasthttp.RequestCtx, store ec.LayoutStore, id string, req wire.GatewayRequest) {
	const op = "gw.PUT"
	if req.Upload != "" && s.md == nil {
		httperr.Write(ctx, shoal.Errorf(op, shoal.KindUnavailable, "no md to commit to"))
		return
	}
	if req.Upload != "" {
		defer s.active.Begin(req.Upload)()
	}
	body, ok := objhttp.CheckSize(ctx, op, s.opts.MaxBodySize, req.Max)
	if !ok {
		objhttp.Abort(s.md, req.Upload, s.log.Warn)
		return
	}
	w, err := store.CreateShards(ctx, id, body)
	if err != nil {
		if !shoal.IsKind(err, shoal.KindExist) { // else another request wrote this upload's object
			objhttp.Abort(s.md, req.Upload, s.log.Warn)
		}
		objhttp.DrainRest(ctx, body)
		httperr.Write(ctx, err)
		return
	}
	objhttp.SetSums(ctx, w.Info.Size, w.Sums)
	if req.Upload == "" {
		ctx.SetStatusCode(fasthttp.StatusCreated)
		return
	}
	objhttp.Commit(ctx, s.md, op, id, commitOf(req, id, w), func() {
		if err := store.Remove(ctx, id); err != nil {
			s.log.Error("removing uncommitted shards", "object", id, "err", err)
		}
	})
}

// commitOf is the commit of a written upload: one replica row per copy
// or shard.
func commitOf(req wire.GatewayRequest, id string, w *ec.Written) wire.CommitRequest {
	commit := wire.CommitRequest{
		Upload:  req.Upload,
		Size:    w.Info.Size,
		Adler32: wire.FormatAdler32(w.Sums.Adler32),
		MD5:     hex.EncodeToString(w.Sums.MD5),
		MTime:   w.Info.ModTime.UnixNano(),
	}
	for i, sh := range w.Shards {
		if req.Servers[i] == "" {
			continue // left out by a degraded write: no row, so repair sees it missing
		}
		shard := i
		if req.Layout.Kind == shoal.LayoutReplica {
			shard = 0 // full copies, not shards
		}
		commit.Replicas = append(commit.Replicas, wire.Replica{Server: req.Servers[i], Object: id, Shard: shard, Size: sh.Size, Sum: sh.Adler32})
	}
	return commit
}

// serveGet answers GET and HEAD: the whole object, one range (206) or
// several (206 multipart/byteranges, read part by part with ReadAt); a bad
// Range is answered by objhttp.StartRead (400 malformed, 416 unsatisfiable).
func (s *Server) serveGet(ctx *fasthttp.RequestCtx, store ec.LayoutStore, id string) {
	obj, err := store.OpenAt(ctx, id, rangeStart(ctx))
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	size := obj.Size()
	rs, ok := objhttp.StartRead(ctx, size)
	if !ok {
		obj.Close()
		return
	}
	if len(rs) > 1 {
		objhttp.SetMultipart(ctx, obj, obj, rs, size)
		return
	}
	start, end := objhttp.Span(rs, size)
	n := end - start
	if ctx.IsHead() {
		obj.Close()
		netguard.SetBody(ctx, nil, n)
		ctx.Response.SkipBody = true
		return
	}
	if ec.InOneStripe(obj, start, start+n) {
		// Read before answering: a stripe that cannot be read is a clear
		// 503, not a body cut after a 200.
		body := make([]byte, n)
		_, err := obj.ReadAt(body, start)
		obj.Close()
		if err != nil && err != io.EOF {
			httperr.Write(ctx, err)
			return
		}
		ctx.Response.SetBodyRaw(body)
		return
	}
	// Shard fetches overlap the transfer to the client (see ec.NewReader).
	netguard.SetBody(ctx, httperr.Body(ctx, ec.NewReader(obj, start, start+n)), n)
}

// rangeStart is where the request's first byte range starts ("bytes=N-…"),
// 0 without one or for a suffix range: a hint for OpenAt only, the Range
// itself is checked later against the size.
func rangeStart(ctx *fasthttp.RequestCtx) int64 {
	r := string(ctx.Request.Header.Peek(fasthttp.HeaderRange))
	spec, ok := strings.CutPrefix(r, "bytes=")
	if !ok {
		return 0
	}
	first, _, _ := strings.Cut(spec, "-")
	n, err := strconv.ParseInt(strings.TrimSpace(first), 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}
