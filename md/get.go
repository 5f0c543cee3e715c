package md

import (
	"bufio"
	"bytes"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/dav"
	"shoal/internal/httperr"
	"shoal/internal/objhttp"
)

var hdrLocation = []byte("Location")

// handleGet answers GET: inline files from the catalog, other files by
// redirect or proxy, directories with a small HTML listing (browsers are
// the clients that GET a collection; WebDAV clients use PROPFIND).
func (s *Server) handleGet(ctx *fasthttp.RequestCtx) {
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
	if e.IsDir {
		s.getDir(ctx, e)
		return
	}
	if e.Inline != nil || e.Size == 0 {
		s.getInline(ctx, e)
		return
	}
	if wantsMetalink(ctx) {
		s.serveMetalink(ctx, e)
		return
	}
	if s.getLocal(ctx, e) {
		return
	}
	if s.redirects(ctx) {
		s.getRedirect(ctx, e)
		return
	}
	s.getProxy(ctx, e)
}

// redirects reports whether this client is sent to the data server.
func (s *Server) redirects(ctx *fasthttp.RequestCtx) bool {
	switch s.opts.DataMode {
	case DataRedirect:
		return true
	case DataProxy:
		return false
	}
	ua := ctx.Request.Header.UserAgent()
	for _, a := range s.opts.NoRedirectAgents {
		if a != "" && bytes.Contains(ua, []byte(a)) {
			return false
		}
	}
	return true
}

// getInline serves a file kept in the catalog, with Range as the data
// servers answer it (internal/httprange): one range, or several as
// multipart/byteranges.
func (s *Server) getInline(ctx *fasthttp.RequestCtx, e *shoal.Entry) {
	rs, ok := objhttp.Ranges(ctx, e.Size, objhttp.ValidatorsOf(e))
	if !ok {
		return
	}
	s.setEntryHeaders(ctx, e)
	objhttp.SetStatus(ctx, rs, e.Size)
	switch len(rs) {
	case 0:
		ctx.SetBody(e.Inline)
	case 1:
		ctx.SetBody(e.Inline[rs[0].Start:rs[0].End])
	default:
		objhttp.SetMultipart(ctx, bytes.NewReader(e.Inline), nil, rs, e.Size)
	}
}

// getRedirect sends the client to a data server with a signed URL that
// carries its own credential, naming the other replicas in Link headers
// (RFC 6249) and the Metalink that lists them all.
func (s *Server) getRedirect(ctx *fasthttp.RequestCtx, e *shoal.Entry) {
	targets, err := s.readTargets(s.base, e, urlTagOf(ctx))
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	s.setEntryHeaders(ctx, e)
	ctx.Response.Header.SetBytesKV(hdrLocation, []byte(targets[0].url))
	addFailoverLinks(ctx, e, targets)
	ctx.SetStatusCode(fasthttp.StatusFound)
}

// getProxy streams the file from its data servers (remoteFile), with
// Range answered as every shoal server answers it (objhttp). Its first
// window is opened before the answer starts, so that a file no replica
// can serve gets the error rather than a 200 cut short.
func (s *Server) getProxy(ctx *fasthttp.RequestCtx, e *shoal.Entry) {
	rs, ok := objhttp.Ranges(ctx, e.Size, objhttp.ValidatorsOf(e))
	if !ok {
		return
	}
	f := s.remoteFile(e, urlTagOf(ctx), "GET")
	start := int64(0)
	if len(rs) > 0 {
		start = rs[0].Start
	}
	if err := f.open(start); err != nil {
		httperr.Write(ctx, err)
		return
	}
	s.setEntryHeaders(ctx, e)
	objhttp.SetStatus(ctx, rs, e.Size)
	objhttp.Send(ctx, f, rs, e.Size)
}

// getDir lists a directory as an HTML page, streamed a catalog page at a
// time when the directory has more than one page of children.
func (s *Server) getDir(ctx *fasthttp.RequestCtx, e *shoal.Entry) {
	p, err := s.cat.ListPage(s.base, e.Path, "", listPageSize, false)
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	s.setEntryHeaders(ctx, e)
	ctx.Response.Header.Set(fasthttp.HeaderCacheControl, "no-cache") // see readConditions
	buf := getBuf()
	b := dav.AppendHTMLListHead(buf.b[:0], e.Path)
	for _, c := range p.Entries {
		b = dav.AppendHTMLListRow(b, c)
	}
	if !p.More || len(p.Entries) == 0 {
		ctx.SetBody(append(b, dav.HTMLListTail...))
		buf.b = b
		putBuf(buf)
		return
	}
	buf.b = b
	dir, after := e.Path, p.Entries[len(p.Entries)-1].Name()
	httperr.StreamWriter(ctx, func(w *bufio.Writer) {
		defer putBuf(buf)
		for {
			if _, err := w.Write(buf.b); err != nil {
				return
			}
			if err := w.Flush(); err != nil {
				return
			}
			p, err := s.cat.ListPage(s.base, dir, after, listPageSize, false)
			if err != nil {
				// The status is sent: say so in the page itself.
				b := append(buf.b[:0], "</ul><p>listing cut short: "...)
				w.Write(dav.AppendHTMLText(b, err.Error()))
				w.WriteString("</p></body></html>\n")
				return
			}
			b := buf.b[:0]
			for _, c := range p.Entries {
				b = dav.AppendHTMLListRow(b, c)
			}
			buf.b = b
			if !p.More || len(p.Entries) == 0 {
				w.Write(b)
				w.WriteString(dav.HTMLListTail)
				return
			}
			after = p.Entries[len(p.Entries)-1].Name()
		}
	})
}
