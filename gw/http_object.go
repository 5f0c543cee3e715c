package gw

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/wire"
)

// Response headers of a PUT, as diskserver sends them: the stored size and
// the user file's checksums (RFC 3230: adler32 in hex, md5 in base64).
const (
	HeaderDigest = "Digest"
	HeaderSize   = "X-Shoal-Size"
)

// serveObject handles PUT, GET, HEAD and DELETE on /obj/<id>.
func (s *Server) serveObject(ctx *fasthttp.RequestCtx, id string) {
	const op = "gw"
	if !shoal.ValidObjectID(id) {
		fail(ctx, shoal.Errorf(op, shoal.KindInvalid, "bad object id"))
		return
	}
	method := string(ctx.Method())
	switch method {
	case fasthttp.MethodGet, fasthttp.MethodHead, fasthttp.MethodPut, fasthttp.MethodDelete:
	default:
		ctx.Response.Header.Set("Allow", "GET, HEAD, PUT, DELETE")
		fail(ctx, shoal.Errorf(op, shoal.KindNotAllowed, "%s not allowed on objects", method))
		return
	}
	args := ctx.QueryArgs()
	req, err := verifyQuery(s.opts.Keys, method, id, func(k string) string { return string(args.Peek(k)) }, time.Now())
	if err != nil {
		fail(ctx, err)
		return
	}
	shards, err := s.dir.stores(req.servers)
	if err != nil {
		fail(ctx, err)
		return
	}
	store, err := s.storeFor(req.layout, shards)
	if err != nil {
		fail(ctx, err)
		return
	}
	switch method {
	case fasthttp.MethodGet, fasthttp.MethodHead:
		s.serveGet(ctx, store, id)
	case fasthttp.MethodPut:
		s.servePut(ctx, store, id, req)
	case fasthttp.MethodDelete:
		if err := store.Remove(ctx, id); err != nil {
			fail(ctx, err)
			return
		}
		ctx.SetStatusCode(fasthttp.StatusNoContent)
	}
}

// servePut encodes the body onto the shard servers and, with an upload id,
// commits one replica per shard to md and relays md's answer; a failed
// commit removes the shards.
func (s *Server) servePut(ctx *fasthttp.RequestCtx, store layoutStore, id string, req request) {
	const op = "gw.PUT"
	if req.upload != "" && s.md == nil {
		fail(ctx, shoal.Errorf(op, shoal.KindUnavailable, "no md to commit to"))
		return
	}
	want := int64(ctx.Request.Header.ContentLength())
	if want > s.opts.MaxBodySize {
		ctx.SetConnectionClose()
		fail(ctx, shoal.Errorf(op, shoal.KindTooLarge, "body of %d bytes over the limit of %d", want, s.opts.MaxBodySize))
		return
	}
	body := &exactReader{r: ctx.RequestBodyStream(), want: want, max: s.opts.MaxBodySize}
	w, err := store.CreateShards(ctx, id, body)
	if err != nil {
		ctx.SetConnectionClose() // the rest of the body, if any, is not read
		fail(ctx, err)
		return
	}
	d := "adler32=" + wire.FormatAdler32(w.Sums.Adler32)
	if len(w.Sums.MD5) == md5.Size {
		d += ",md5=" + base64.StdEncoding.EncodeToString(w.Sums.MD5)
	}
	ctx.Response.Header.Set(HeaderDigest, d)
	ctx.Response.Header.Set(HeaderSize, strconv.FormatInt(w.Info.Size, 10))
	if req.upload == "" {
		ctx.SetStatusCode(fasthttp.StatusCreated)
		return
	}
	commit := wire.CommitRequest{
		Upload:  req.upload,
		Size:    w.Info.Size,
		Adler32: wire.FormatAdler32(w.Sums.Adler32),
		MD5:     hex.EncodeToString(w.Sums.MD5),
		MTime:   w.Info.ModTime.UnixNano(),
	}
	for i, sh := range w.Shards {
		shard := i
		if req.layout.Kind == shoal.LayoutReplica {
			shard = 0 // full copies, not shards
		}
		commit.Replicas = append(commit.Replicas, wire.Replica{Server: req.servers[i], Object: id, Shard: shard, Size: sh.Size, Sum: sh.Adler32})
	}
	var reply wire.CommitReply
	status, err := s.md.Call(wire.PathCommit, commit, &reply)
	if err == nil && status != fasthttp.StatusCreated && status != fasthttp.StatusNoContent {
		err = shoal.Errorf(op, shoal.KindUnavailable, "md answered the commit with %d", status)
	}
	if err != nil {
		if rerr := store.Remove(ctx, id); rerr != nil {
			s.log.Error("removing uncommitted shards", "object", id, "err", rerr)
		}
		if status >= 400 { // md's own answer, relayed as is
			reason := shoal.Reason(err)
			var se *shoal.Error
			if errors.As(err, &se) && se.Err != nil {
				reason = se.Err.Error()
			}
			ctx.Response.Reset()
			ctx.SetStatusCode(status)
			ctx.SetContentType("text/plain; charset=utf-8")
			ctx.SetBodyString(reason + "\n")
			return
		}
		fail(ctx, shoal.E(op, id, shoal.KindUnavailable, err))
		return
	}
	if reply.ETag != "" {
		ctx.Response.Header.Set(fasthttp.HeaderETag, reply.ETag)
	}
	ctx.SetStatusCode(status)
}

// exactReader fails with KindInvalid if the body ends before its
// Content-Length (want < 0: chunked, no check), so a client that dies
// half-way never leaves a short object, and with KindTooLarge past max.
type exactReader struct {
	r         io.Reader
	want, max int64
	got       int64
}

func (e *exactReader) Read(p []byte) (int, error) {
	if e.r == nil {
		return 0, io.EOF
	}
	n, err := e.r.Read(p)
	e.got += int64(n)
	if e.got > e.max {
		return n, shoal.Errorf("gw.PUT", shoal.KindTooLarge, "body over the limit of %d bytes", e.max)
	}
	if err == io.EOF && e.want >= 0 && e.got != e.want {
		return n, shoal.Errorf("gw.PUT", shoal.KindInvalid, "body ended after %d of %d bytes: %w", e.got, e.want, io.ErrUnexpectedEOF)
	}
	return n, err
}

// serveGet answers GET and HEAD: the whole object or one range (206). A
// malformed Range header, or one with several ranges, is ignored and the
// whole object served (RFC 7233 §3.1 allows it).
func (s *Server) serveGet(ctx *fasthttp.RequestCtx, store layoutStore, id string) {
	obj, err := store.Open(ctx, id)
	if err != nil {
		fail(ctx, err)
		return
	}
	size := obj.Size()
	h := &ctx.Response.Header
	h.Set(fasthttp.HeaderAcceptRanges, "bytes")
	h.Set(fasthttp.HeaderContentType, "application/octet-stream")
	start, n := int64(0), size
	status := fasthttp.StatusOK
	if rh := ctx.Request.Header.Peek(fasthttp.HeaderRange); len(rh) > 0 {
		r0, r1, ok, unsatisfiable := parseSingleRange(string(rh), size)
		switch {
		case unsatisfiable:
			obj.Close()
			ctx.SetStatusCode(fasthttp.StatusRequestedRangeNotSatisfiable)
			h.Set(fasthttp.HeaderContentRange, "bytes */"+strconv.FormatInt(size, 10))
			h.Set(fasthttp.HeaderContentType, "text/plain; charset=utf-8")
			ctx.SetBodyString("range not satisfiable\n")
			return
		case ok:
			start, n, status = r0, r1-r0, fasthttp.StatusPartialContent
			h.Set(fasthttp.HeaderContentRange, "bytes "+strconv.FormatInt(r0, 10)+"-"+strconv.FormatInt(r1-1, 10)+"/"+strconv.FormatInt(size, 10))
		}
	}
	ctx.SetStatusCode(status)
	if ctx.IsHead() {
		obj.Close()
		h.SetContentLength(int(n))
		ctx.Response.SkipBody = true
		return
	}
	// Shard fetches overlap the transfer to the client (see bodyReader).
	ctx.SetBodyStream(bodyReader(obj, start, start+n), int(n))
}
