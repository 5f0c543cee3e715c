package diskserver

import (
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/sign"
	"shoal/wire"
)

// Response headers a raw PUT answers with, so that gw and repair learn the
// stored object's size and checksums (RFC 3230 Digest: adler32 in hex as
// WLCG does, md5 in base64).
const (
	HeaderDigest = "Digest"
	HeaderSize   = "X-Shoal-Size"
)

// serveObject handles PUT, GET, HEAD and DELETE on /obj/<id>.
func (s *Server) serveObject(ctx *fasthttp.RequestCtx, id string) {
	const op = "diskserver"
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
	upload, err := s.verifyURL(ctx, method, id)
	if err != nil {
		fail(ctx, err)
		return
	}
	switch method {
	case fasthttp.MethodGet, fasthttp.MethodHead:
		s.serveGet(ctx, id)
	case fasthttp.MethodPut:
		s.servePut(ctx, id, upload)
	case fasthttp.MethodDelete:
		if err := s.store.Remove(ctx, id); err != nil {
			fail(ctx, err)
			return
		}
		ctx.SetStatusCode(fasthttp.StatusNoContent)
	}
}

// verifyURL checks the signed query of an object request and returns its
// upload id. A HEAD may use a URL signed for GET (it is a GET without body).
func (s *Server) verifyURL(ctx *fasthttp.RequestCtx, method, id string) (string, error) {
	const op = "diskserver.verify"
	args := ctx.QueryArgs()
	expS, kid, sig := args.Peek(sign.ParamExpiry), args.Peek(sign.ParamKeyID), args.Peek(sign.ParamSig)
	if len(expS) == 0 || len(kid) == 0 || len(sig) == 0 {
		return "", shoal.Errorf(op, shoal.KindPermission, "missing signature (exp, kid, sig)")
	}
	exp, err := strconv.ParseInt(string(expS), 10, 64)
	if err != nil {
		return "", shoal.Errorf(op, shoal.KindPermission, "bad expiry")
	}
	upload := string(args.Peek(sign.ParamUpload))
	now := time.Now()
	err = s.opts.Keys.Verify(method, id, exp, upload, string(kid), string(sig), now)
	if err != nil && method == fasthttp.MethodHead {
		if s.opts.Keys.Verify(fasthttp.MethodGet, id, exp, upload, string(kid), string(sig), now) == nil {
			err = nil
		}
	}
	return upload, err
}

// servePut stores the body as object id and, with an upload id, commits it
// to md and relays md's answer; a failed commit removes the object.
func (s *Server) servePut(ctx *fasthttp.RequestCtx, id, upload string) {
	const op = "diskserver.PUT"
	if upload != "" && s.md == nil {
		fail(ctx, shoal.Errorf(op, shoal.KindUnavailable, "no md to commit to"))
		return
	}
	// fasthttp does not enforce MaxRequestBodySize on streamed bodies
	// (it only decides what to pre-read), so the limit is checked here.
	want := int64(ctx.Request.Header.ContentLength())
	if want > s.opts.MaxBodySize {
		fail(ctx, shoal.Errorf(op, shoal.KindTooLarge, "body of %d bytes over the limit of %d", want, s.opts.MaxBodySize))
		ctx.SetConnectionClose()
		return
	}
	body := &exactReader{r: ctx.RequestBodyStream(), want: want, max: s.opts.MaxBodySize}
	// Not the RequestCtx: fasthttp cancels it at Shutdown, which would abort
	// an upload in flight instead of letting it finish (graceful SIGTERM).
	info, sums, err := s.store.CreateSized(context.WithoutCancel(ctx), id, body, want)
	if err != nil {
		drainBody(ctx, body, err)
		fail(ctx, err)
		return
	}
	setSumHeaders(ctx, info, sums)
	if upload == "" {
		ctx.SetStatusCode(fasthttp.StatusCreated)
		return
	}
	req := wire.CommitRequest{
		Upload:  upload,
		Size:    info.Size,
		Adler32: wire.FormatAdler32(sums.Adler32),
		MD5:     hex.EncodeToString(sums.MD5),
		MTime:   info.ModTime.UnixNano(),
		Replicas: []wire.Replica{{
			Server: s.opts.ID, Object: id, Size: info.Size, Sum: sums.Adler32,
		}},
	}
	var reply wire.CommitReply
	status, err := s.md.Call(wire.PathCommit, req, &reply)
	if err == nil && status != fasthttp.StatusCreated && status != fasthttp.StatusNoContent {
		err = shoal.Errorf(op, shoal.KindUnavailable, "md answered the commit with %d", status)
	}
	if err != nil {
		if rerr := s.store.Remove(ctx, id); rerr != nil {
			s.log.Error("removing uncommitted object", "object", id, "err", rerr)
		}
		if status >= 400 {
			// md's own answer (its status and reason text), relayed as is.
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

// DrainLimit is how much of a refused PUT body (e.g. a duplicate id) the
// server reads and discards so that the client, still sending, gets the
// answer: a server that closes with unread data makes the kernel reset the
// connection, and the client sees a broken pipe instead of the status.
// Larger bodies are cut off.
const DrainLimit = 64 << 20

func drainBody(ctx *fasthttp.RequestCtx, body *exactReader, err error) {
	if shoal.IsKind(err, shoal.KindTooLarge) || body.failed || body.want-body.got > DrainLimit {
		ctx.SetConnectionClose()
		return
	}
	n, _ := io.CopyN(io.Discard, body.r, DrainLimit)
	if n == DrainLimit {
		ctx.SetConnectionClose()
	}
}

func setSumHeaders(ctx *fasthttp.RequestCtx, info shoal.ObjectInfo, sums shoal.Sums) {
	d := "adler32=" + wire.FormatAdler32(sums.Adler32)
	if len(sums.MD5) == md5.Size {
		d += ",md5=" + base64.StdEncoding.EncodeToString(sums.MD5)
	}
	ctx.Response.Header.Set(HeaderDigest, d)
	ctx.Response.Header.Set(HeaderSize, strconv.FormatInt(info.Size, 10))
}

// exactReader fails with io.ErrUnexpectedEOF if the body ends before its
// Content-Length (want < 0: chunked, no check), so a client that dies
// half-way never leaves a short object.
type exactReader struct {
	r    io.Reader
	want int64 // Content-Length; < 0 for chunked
	max  int64 // the body limit
	got  int64
	// failed: reading the body broke (client gone, bad chunking).
	failed bool
}

func (e *exactReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	e.got += int64(n)
	if e.got > e.max {
		return n, shoal.Errorf("diskserver.PUT", shoal.KindTooLarge, "body over the limit of %d bytes", e.max)
	}
	if err == io.EOF && e.want >= 0 && e.got != e.want {
		return n, shoal.Errorf("diskserver.PUT", shoal.KindInvalid, "body ended after %d of %d bytes: %w", e.got, e.want, io.ErrUnexpectedEOF)
	}
	if err != nil && err != io.EOF {
		e.failed = true
		return n, shoal.Errorf("diskserver.PUT", shoal.KindInvalid, "reading body: %w", err)
	}
	return n, err
}
