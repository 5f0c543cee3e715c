package diskserver

import (
	"github.com/valyala/fasthttp"

	"shoal/internal/httperr"
	"shoal/internal/objhttp"
)

// serveGet answers GET and HEAD: the whole object, one range (206) or
// several (206 multipart/byteranges); a bad Range is answered by
// objhttp.StartRead (400 malformed, 416 unsatisfiable).
//
// The body (objhttp.Send) is a netguard.FileBody of the object's file (shared with its
// other readers: see openFiles) with an exact Content-Length. On a
// connection that can sendfile, a body larger than fasthttp's write
// buffer has the header flushed on its own (ImmediateHeaderFlush: else
// fasthttp would fill the rest of the buffer behind the header with a
// pread of the body first; netguard.FileFollows), then, its buffer
// empty, hands the body to the connection's ReadFrom (v1.78 http.go:
// writeBodyFixedSize → fixedSizeBodyWriter.ReadFrom →
// bufio.Writer.ReadFrom), which netguard answers with sendfile(2) at the
// body's offset; the header goes out with MSG_MORE
// (netguard.FileFollows), so header and body leave together.
func (s *Server) serveGet(ctx *fasthttp.RequestCtx, id string) {
	f, err := s.store.openFile(id)
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	size := f.Size()
	rs, ok := objhttp.StartRead(ctx, size)
	if !ok {
		f.Close()
		return
	}
	if len(ctx.Response.Header.Peek(fasthttp.HeaderLastModified)) == 0 {
		ctx.Response.Header.SetLastModified(f.ModTime()) // no md's date in the URL
	}
	objhttp.Send(ctx, f, rs, size)
}
