package diskserver

import (
	"io"

	"github.com/valyala/fasthttp"

	"shoal/internal/httperr"
	"shoal/internal/objhttp"
)

// serveGet answers GET and HEAD: the whole object, one range (206) or
// several (206 multipart/byteranges); a bad Range is answered by
// objhttp.StartRead (400 malformed, 416 unsatisfiable).
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
		httperr.Write(ctx, err)
		return
	}
	rs, ok := objhttp.StartRead(ctx, f.size)
	if !ok {
		f.Close()
		return
	}
	ctx.Response.Header.SetLastModified(f.modTime)
	if len(rs) > 1 {
		objhttp.SetMultipart(ctx, f, f, rs, f.size)
		return
	}
	start, end := objhttp.Span(rs, f.size)
	if start > 0 {
		if _, err := f.Seek(start, io.SeekStart); err != nil {
			f.Close()
			httperr.Write(ctx, err)
			return
		}
	}
	ctx.SetBodyStream(f.File, int(end-start))
}
