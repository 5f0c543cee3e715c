package md

import (
	"sync"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/dav"
	"shoal/internal/httperr"
	"shoal/internal/netguard"
)

// Precomputed header names and values for the stat path: fasthttp's []byte
// setters copy them, so nothing is allocated per request.
var (
	hdrETag         = []byte("ETag")
	hdrLastModified = []byte("Last-Modified")
	hdrAcceptRanges = []byte("Accept-Ranges")
	hdrDigest       = []byte("Digest")
	hdrWantDigest   = []byte("Want-Digest")
	valBytes        = []byte("bytes")
	ctHTML          = []byte("text/html; charset=utf-8")
)

// buffer is a per-request scratch buffer for header values and XML.
type buffer struct{ b []byte }

var bufPool = sync.Pool{New: func() any { return &buffer{b: make([]byte, 0, 4096)} }}

func getBuf() *buffer { b := bufPool.Get().(*buffer); b.b = b.b[:0]; return b }

func putBuf(b *buffer) {
	if cap(b.b) <= 1<<20 {
		bufPool.Put(b)
	}
}

// stat looks an entry up for a request.
func (s *Server) stat(ctx *fasthttp.RequestCtx, path string) (*shoal.Entry, error) {
	return s.cat.Stat(s.base, path)
}

// handleHead answers HEAD: the headers GET would send, no body. This is
// the hot path; see BenchmarkHEAD.
func (s *Server) handleHead(ctx *fasthttp.RequestCtx) {
	path, _, err := requestPath(ctx)
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	e, err := s.stat(ctx, path)
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	if !s.readConditions(ctx, e) {
		return
	}
	if !e.IsDir && e.Inline == nil && e.Size > 0 && wantsMetalink(ctx) {
		s.serveMetalink(ctx, e) // davix's failover asks with a HEAD first
		return
	}
	s.setEntryHeaders(ctx, e)
	if e.IsDir {
		return
	}
	netguard.SetBody(ctx, nil, e.Size)
	ctx.Response.SkipBody = true
}

// setEntryHeaders sets ETag, Last-Modified, Content-Type and, for files,
// Accept-Ranges and the Digest the client asked for with Want-Digest.
func (s *Server) setEntryHeaders(ctx *fasthttp.RequestCtx, e *shoal.Entry) {
	buf := getBuf()
	h := &ctx.Response.Header
	buf.b = e.AppendETag(buf.b[:0])
	h.SetBytesKV(hdrETag, buf.b)
	buf.b = fasthttp.AppendHTTPDate(buf.b[:0], e.MTime)
	h.SetBytesKV(hdrLastModified, buf.b)
	if e.IsDir {
		h.SetContentTypeBytes(ctHTML)
		putBuf(buf)
		return
	}
	ct := dav.ContentType(e.Path)
	h.SetContentTypeBytes(ct)
	s.guardActive(h, ct)
	h.SetBytesKV(hdrAcceptRanges, valBytes)
	if want := ctx.Request.Header.PeekBytes(hdrWantDigest); len(want) > 0 {
		w := dav.ParseWantDigest(want)
		buf.b = dav.AppendDigest(buf.b[:0], &w, &e.Sums)
		if len(buf.b) > 0 {
			h.SetBytesKV(hdrDigest, buf.b)
		}
	}
	putBuf(buf)
}
