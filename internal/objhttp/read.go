package objhttp

import (
	"io"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/internal/httperr"
	"shoal/internal/httprange"
	"shoal/internal/netguard"
)

// StartRead reads a GET or HEAD's Range header against an object of size
// bytes (see httprange for the one behaviour of every shoal server) and
// sets what every answer carries: Accept-Ranges, Content-Type, the status,
// and for a single range its Content-Range. It returns the ranges to send:
// nil for the whole object (200), one (206, the body is that span), or
// several (206, the body is SetMultipart's). When it returns false it has
// answered: 400 for a malformed range, 416 with "Content-Range: bytes */SIZE".
func StartRead(ctx *fasthttp.RequestCtx, size int64) ([]httprange.Range, bool) {
	h := &ctx.Response.Header
	var rs []httprange.Range
	if rh := ctx.Request.Header.Peek(fasthttp.HeaderRange); len(rh) > 0 {
		var err error
		if rs, err = httprange.Parse(string(rh), size); err != nil {
			httperr.Write(ctx, err)
			if shoal.IsKind(err, shoal.KindBadRange) {
				h.Set(fasthttp.HeaderContentRange, httprange.Unsatisfied(size))
			}
			return nil, false
		}
	}
	h.Set(fasthttp.HeaderAcceptRanges, "bytes")
	h.Set(fasthttp.HeaderContentType, "application/octet-stream")
	switch len(rs) {
	case 0:
		ctx.SetStatusCode(fasthttp.StatusOK)
	case 1:
		ctx.SetStatusCode(fasthttp.StatusPartialContent)
		h.Set(fasthttp.HeaderContentRange, httprange.ContentRange(rs[0], size))
	default:
		ctx.SetStatusCode(fasthttp.StatusPartialContent)
	}
	return rs, true
}

// Span is the part of an object of size bytes that a GET answered by
// StartRead with no or one range sends: [start, end).
func Span(rs []httprange.Range, size int64) (start, end int64) {
	if len(rs) == 0 {
		return 0, size
	}
	return rs[0].Start, rs[0].End
}

// SetMultipart sets the body of a several-range answer: the ranges rs of
// src, an object of size bytes, as multipart/byteranges. fasthttp closes
// the body after sending it, which closes c (nil: nothing to close).
func SetMultipart(ctx *fasthttp.RequestCtx, src io.ReaderAt, c io.Closer, rs []httprange.Range, size int64) {
	body, n, ctype := httprange.Multipart(src, rs, size, "application/octet-stream")
	ctx.Response.Header.Set(fasthttp.HeaderContentType, ctype)
	if c != nil {
		body = readCloser{body, c}
	}
	netguard.SetBody(ctx, body, n)
}

type readCloser struct {
	io.Reader
	io.Closer
}
