package diskserver

import (
	"crypto/rand"
	"encoding/hex"
	"io"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"
)

// serveGet answers GET and HEAD: the whole object, one range (206) or
// several (206 multipart/byteranges). A malformed Range header is ignored
// and the whole object served, as RFC 7233 §3.1 allows.
//
// The body is handed to fasthttp as the *os.File itself with an exact
// Content-Length. fasthttp (v1.78 http.go: writeBodyFixedSize →
// copyZeroAlloc → fixedSizeBodyWriter.ReadFrom) flushes its buffer and
// calls bufio.Writer.ReadFrom with an io.LimitedReader around the file,
// which goes to net.TCPConn.ReadFrom, i.e. sendfile(2). A single range
// gets the same path: the file is positioned at the range's start and the
// Content-Length bounds it.
func (s *Server) serveGet(ctx *fasthttp.RequestCtx, id string) {
	f, err := s.store.openFile(id)
	if err != nil {
		fail(ctx, err)
		return
	}
	h := &ctx.Response.Header
	h.Set(fasthttp.HeaderAcceptRanges, "bytes")
	h.Set(fasthttp.HeaderContentType, "application/octet-stream")
	h.SetLastModified(f.modTime)
	size := f.size

	rangeHeader := ctx.Request.Header.Peek(fasthttp.HeaderRange)
	rs, ignore, unsatisfiable := parseRange(string(rangeHeader), size)
	switch {
	case len(rangeHeader) == 0 || ignore:
		ctx.SetStatusCode(fasthttp.StatusOK)
		ctx.SetBodyStream(f.File, int(size))
	case unsatisfiable:
		f.Close()
		ctx.SetStatusCode(fasthttp.StatusRequestedRangeNotSatisfiable)
		h.Set(fasthttp.HeaderContentRange, "bytes */"+strconv.FormatInt(size, 10))
		h.Set(fasthttp.HeaderContentType, "text/plain; charset=utf-8")
		ctx.SetBodyString("range not satisfiable\n")
	case len(rs) == 1:
		r := rs[0]
		if _, err := f.Seek(r.start, io.SeekStart); err != nil {
			f.Close()
			fail(ctx, err)
			return
		}
		ctx.SetStatusCode(fasthttp.StatusPartialContent)
		h.Set(fasthttp.HeaderContentRange, r.contentRange(size))
		ctx.SetBodyStream(f.File, int(r.length()))
	default:
		body, n, ctype := multipartRanges(f, rs, size)
		ctx.SetStatusCode(fasthttp.StatusPartialContent)
		h.Set(fasthttp.HeaderContentType, ctype)
		ctx.SetBodyStream(body, int(n))
	}
}

// multipartRanges builds a multipart/byteranges body (RFC 7233 appendix A)
// over f, its exact length, and its Content-Type. Closing the body closes f.
func multipartRanges(f *file, rs []byteRange, size int64) (io.ReadCloser, int64, string) {
	b := make([]byte, 12)
	rand.Read(b)
	boundary := hex.EncodeToString(b)
	var parts []io.Reader
	var n int64
	for i, r := range rs {
		var head strings.Builder
		if i > 0 {
			head.WriteString("\r\n")
		}
		head.WriteString("--" + boundary + "\r\n")
		head.WriteString("Content-Type: application/octet-stream\r\n")
		head.WriteString("Content-Range: " + r.contentRange(size) + "\r\n\r\n")
		parts = append(parts, strings.NewReader(head.String()), io.NewSectionReader(f, r.start, r.length()))
		n += int64(head.Len()) + r.length()
	}
	tail := "\r\n--" + boundary + "--\r\n"
	parts = append(parts, strings.NewReader(tail))
	n += int64(len(tail))
	return readCloser{io.MultiReader(parts...), f}, n, "multipart/byteranges; boundary=" + boundary
}

type readCloser struct {
	io.Reader
	io.Closer
}
