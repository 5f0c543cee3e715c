package md

import (
	"bufio"
	"bytes"
	"io"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/dav"
	"shoal/internal/httperr"
	"shoal/internal/objhttp"
	"shoal/placement"
	"shoal/wire"
)

var (
	hdrContentRange = []byte("Content-Range")
	hdrRange        = []byte("Range")
	hdrLocation     = []byte("Location")
)

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
	rs, ok := objhttp.Ranges(ctx, e.Size)
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

// getProxy streams the file from a data server, passing Range through.
// A replica whose server cannot be reached (it died since its last
// heartbeat) or that answers 5xx before any byte is sent is skipped for
// the next; an unreachable one is marked suspect, so that md stops
// choosing it.
func (s *Server) getProxy(ctx *fasthttp.RequestCtx, e *shoal.Entry) {
	targets, err := s.readTargets(s.base, e, urlTagOf(ctx))
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	req := fasthttp.AcquireRequest()
	defer fasthttp.ReleaseRequest(req)
	var resp *fasthttp.Response
	for i, t := range targets {
		req.Reset()
		req.SetRequestURI(t.url)
		req.Header.SetMethod(fasthttp.MethodGet)
		if rg := ctx.Request.Header.PeekBytes(hdrRange); len(rg) > 0 {
			req.Header.SetBytesKV(hdrRange, rg)
		}
		resp = fasthttp.AcquireResponse()
		err = s.client.Do(req, resp)
		if err == nil && (resp.StatusCode() < 500 || i == len(targets)-1) {
			break
		}
		if placement.Unreachable(err) {
			s.placement.MarkSuspect(t.server)
		}
		if err == nil {
			resp.CloseBodyStream()
		}
		fasthttp.ReleaseResponse(resp)
		resp = nil
	}
	if resp == nil {
		httperr.Write(ctx, shoal.E("GET", e.Path, shoal.KindUnavailable, err))
		return
	}
	status := resp.StatusCode()
	if status != fasthttp.StatusOK && status != fasthttp.StatusPartialContent {
		// The data server's error, relayed with its kind and reason.
		body, _ := io.ReadAll(io.LimitReader(resp.BodyStream(), 4096))
		httperr.Write(ctx, wire.ResponseError("GET", e.Path, status, func(k string) string { return string(resp.Header.Peek(k)) }, body))
		if cr := resp.Header.PeekBytes(hdrContentRange); status == fasthttp.StatusRequestedRangeNotSatisfiable && len(cr) > 0 {
			ctx.Response.Header.SetBytesKV(hdrContentRange, cr)
		}
		resp.CloseBodyStream()
		fasthttp.ReleaseResponse(resp)
		return
	}
	s.setEntryHeaders(ctx, e)
	ctx.SetStatusCode(status)
	if cr := resp.Header.PeekBytes(hdrContentRange); len(cr) > 0 {
		ctx.Response.Header.SetBytesKV(hdrContentRange, cr)
	}
	if ct := resp.Header.ContentType(); status == fasthttp.StatusPartialContent && bytes.HasPrefix(ct, []byte("multipart/")) {
		ctx.Response.Header.SetContentTypeBytes(ct)
	}
	ctx.SetBodyStream(&proxiedBody{resp: resp}, resp.Header.ContentLength())
}

// proxiedBody is a data server's response body being relayed; fasthttp
// closes it after writing, which returns the response to its pool.
type proxiedBody struct{ resp *fasthttp.Response }

func (p *proxiedBody) Read(b []byte) (int, error) { return p.resp.BodyStream().Read(b) }

func (p *proxiedBody) Close() error {
	err := p.resp.CloseBodyStream()
	fasthttp.ReleaseResponse(p.resp)
	return err
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
	ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
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
