package objhttp

import (
	"bytes"
	"io"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/internal/httperr"
	"shoal/internal/httprange"
	"shoal/internal/netguard"
	"shoal/wire"
)

// StartRead reads a GET or HEAD's Range header against an object of size
// bytes (Ranges) and sets what every answer carries: Accept-Ranges,
// Content-Type, the status, and for a single range its Content-Range
// (SetStatus). It returns the ranges to send: nil for the whole object
// (200), one (206, the body is that span), or several (206, the body is
// SetMultipart's). When it returns false it has answered the error.
func StartRead(ctx *fasthttp.RequestCtx, size int64) ([]httprange.Range, bool) {
	args := ctx.QueryArgs()
	v := Validators{ETag: string(args.Peek(wire.ParamETag))}
	if lm, err := strconv.ParseInt(string(args.Peek(wire.ParamModified)), 10, 64); err == nil {
		v.Modified = time.Unix(lm, 0)
	}
	rs, ok := Ranges(ctx, size, v)
	if !ok {
		return nil, false
	}
	h := &ctx.Response.Header
	if v.ETag != "" {
		h.Set(fasthttp.HeaderETag, v.ETag)
	}
	if !v.Modified.IsZero() {
		h.SetLastModified(v.Modified) // md's, not the object file's
	}
	h.Set(fasthttp.HeaderAcceptRanges, "bytes")
	h.Set(fasthttp.HeaderContentType, "application/octet-stream")
	SetStatus(ctx, rs, size)
	return rs, true
}

// Ranges parses the request's Range against an object of size bytes (see
// httprange for the one behaviour of every shoal server): nil without
// one, or when an If-Range does not match v (the whole object is then
// sent). When it returns false it has answered: 400 for a malformed
// range, 416 with "Content-Range: bytes */SIZE".
func Ranges(ctx *fasthttp.RequestCtx, size int64, v Validators) ([]httprange.Range, bool) {
	rh := ctx.Request.Header.Peek(fasthttp.HeaderRange)
	if len(rh) == 0 || !v.rangeApplies(ctx.Request.Header.Peek(fasthttp.HeaderIfRange)) {
		return nil, true
	}
	rs, err := httprange.Parse(string(rh), size)
	if err != nil {
		httperr.Write(ctx, err)
		if shoal.IsKind(err, shoal.KindBadRange) {
			ctx.Response.Header.Set(fasthttp.HeaderContentRange, httprange.Unsatisfied(size))
		}
		return nil, false
	}
	return rs, true
}

// Validators are what an If-Range is compared with: the answer's ETag and
// Last-Modified. A server that does not know them (a data server or gw:
// md's ETag is the catalog's) leaves them zero: an If-Range then never
// matches, and the whole object is sent, never a range of a version the
// client does not hold.
type Validators struct {
	ETag     string
	Modified time.Time
}

// ValidatorsOf are e's ETag and Last-Modified, as md answers them.
func ValidatorsOf(e *shoal.Entry) Validators {
	return Validators{ETag: e.ETag(), Modified: e.MTime}
}

// rangeApplies reports whether a Range is to be answered given the
// request's If-Range ir (RFC 9110, 13.1.5): without one, or when it is
// the current strong ETag, or exactly the Last-Modified date.
func (v Validators) rangeApplies(ir []byte) bool {
	switch {
	case len(ir) == 0:
		return true
	case ir[0] == '"':
		return v.ETag != "" && string(ir) == v.ETag
	case bytes.HasPrefix(ir, []byte("W/")):
		return false // a weak tag never matches
	}
	t, err := fasthttp.ParseHTTPDate(ir)
	return err == nil && !v.Modified.IsZero() && t.Equal(v.Modified.Truncate(time.Second))
}

// SetStatus sets the status of an answer with the ranges rs of size
// bytes: 200 for the whole, 206 with its Content-Range for one range, 206
// for several.
func SetStatus(ctx *fasthttp.RequestCtx, rs []httprange.Range, size int64) {
	switch len(rs) {
	case 0:
		ctx.SetStatusCode(fasthttp.StatusOK)
	case 1:
		ctx.SetStatusCode(fasthttp.StatusPartialContent)
		var b [64]byte
		ctx.Response.Header.SetBytesV(fasthttp.HeaderContentRange, httprange.AppendContentRange(b[:0], rs[0], size))
	default:
		ctx.SetStatusCode(fasthttp.StatusPartialContent)
	}
}

// Span is the part of an object of size bytes that a GET answered by
// StartRead with no or one range sends: [start, end).
func Span(rs []httprange.Range, size int64) (start, end int64) {
	if len(rs) == 0 {
		return 0, size
	}
	return rs[0].Start, rs[0].End
}

// Send sets the body answering rs (Ranges) of obj, an object of size
// bytes: the whole, one span, or several as SetMultipart's. An object in
// a local file (shoal.FileObject) goes out with sendfile(2) at its
// offset, its header flushed on its own when the body follows
// (netguard.FileFollows). fasthttp closes the body, and so obj, after
// sending it. The file is shared with obj's other readers: never read
// through its position.
func Send(ctx *fasthttp.RequestCtx, obj shoal.Object, rs []httprange.Range, size int64) {
	if len(rs) > 1 {
		SetMultipart(ctx, obj, obj, rs, size)
		return
	}
	start, end := Span(rs, size)
	if fo, ok := obj.(shoal.FileObject); ok {
		f, base := fo.OSFile()
		netguard.SetBody(ctx, netguard.NewFileBody(f, base+start, end-start, obj), end-start)
		if !ctx.IsHead() {
			ctx.Response.ImmediateHeaderFlush = netguard.FileFollows(ctx.Conn(), end-start)
		}
		return
	}
	netguard.SetBody(ctx, httperr.Body(ctx, readCloser{io.NewSectionReader(obj, start, end-start), obj}), end-start)
}

// SetMultipart sets the body of a several-range answer: the ranges rs of
// src, an object of size bytes, as multipart/byteranges, each part of the
// response's Content-Type. fasthttp closes the body after sending it,
// which closes c (nil: nothing to close).
func SetMultipart(ctx *fasthttp.RequestCtx, src io.ReaderAt, c io.Closer, rs []httprange.Range, size int64) {
	body, n, ctype := httprange.Multipart(src, rs, size, string(ctx.Response.Header.ContentType()))
	ctx.Response.Header.Set(fasthttp.HeaderContentType, ctype)
	if c != nil {
		body = readCloser{body, c}
	}
	netguard.SetBody(ctx, httperr.Body(ctx, body), n)
}

type readCloser struct {
	io.Reader
	io.Closer
}
