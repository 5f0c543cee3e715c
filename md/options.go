package md

import "github.com/valyala/fasthttp"

var (
	hdrDAV         = []byte("DAV")
	hdrAllow       = []byte("Allow")
	hdrMSAuthorVia = []byte("MS-Author-Via")
	valDAV         = []byte("1, 2")
	valAllow       = []byte("OPTIONS, GET, HEAD, PUT, DELETE, MKCOL, COPY, MOVE, PROPFIND, PROPPATCH, LOCK, UNLOCK")
	valDAVAuthor   = []byte("DAV")
)

// handleOptions advertises WebDAV class 1 and 2 and the methods md knows.
func (s *Server) handleOptions(ctx *fasthttp.RequestCtx) {
	h := &ctx.Response.Header
	h.SetBytesKV(hdrDAV, valDAV)
	h.SetBytesKV(hdrAllow, valAllow)
	h.SetBytesKV(hdrMSAuthorVia, valDAVAuthor)
	h.SetContentLength(0)
	ctx.SetStatusCode(fasthttp.StatusOK)
}
