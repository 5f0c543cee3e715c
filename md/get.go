package md

import (
	"bytes"
	"html"
	"io"
	"strings"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/internal/httperr"
	"shoal/internal/httprange"
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
	var rs []httprange.Range
	if h := ctx.Request.Header.PeekBytes(hdrRange); len(h) > 0 {
		var err error
		if rs, err = httprange.Parse(string(h), e.Size); err != nil {
			httperr.Write(ctx, err)
			if shoal.IsKind(err, shoal.KindBadRange) {
				buf := getBuf()
				buf.b = httprange.AppendUnsatisfied(buf.b[:0], e.Size)
				ctx.Response.Header.SetBytesKV(hdrContentRange, buf.b)
				putBuf(buf)
			}
			return
		}
	}
	s.setEntryHeaders(ctx, e)
	switch len(rs) {
	case 0:
		ctx.SetBody(e.Inline)
		return
	case 1:
		r := rs[0]
		buf := getBuf()
		buf.b = httprange.AppendContentRange(buf.b[:0], r, e.Size)
		ctx.Response.Header.SetBytesKV(hdrContentRange, buf.b)
		putBuf(buf)
		ctx.SetBody(e.Inline[r.Start:r.End])
	default:
		body, n, ctype := httprange.Multipart(bytes.NewReader(e.Inline), rs, e.Size, string(ctx.Response.Header.ContentType()))
		ctx.Response.Header.Set(fasthttp.HeaderContentType, ctype)
		ctx.SetBodyStream(body, int(n))
	}
	ctx.SetStatusCode(fasthttp.StatusPartialContent)
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
		if unreachable(err) {
			s.placement.markSuspect(t.server)
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

// getDir lists a directory as a small HTML page.
func (s *Server) getDir(ctx *fasthttp.RequestCtx, e *shoal.Entry) {
	children, err := s.cat.List(s.base, e.Path)
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	s.setEntryHeaders(ctx, e)
	var b bytes.Buffer
	title := htmlText(e.Path)
	b.WriteString("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>")
	b.WriteString(title)
	b.WriteString("</title></head><body><h1>")
	b.WriteString(title)
	b.WriteString("</h1><ul>\n")
	if e.Path != "/" {
		b.WriteString("<li><a href=\"" + shoal.EscapePath(shoal.ParentPath(e.Path)) + dirSlash(shoal.ParentPath(e.Path)) + "\">../</a></li>\n")
	}
	for _, c := range children {
		name := c.Name()
		href := shoal.EscapePath(c.Path)
		if c.IsDir {
			href += "/"
			name += "/"
		}
		b.WriteString("<li><a href=\"" + html.EscapeString(href) + "\">" + htmlText(name) + "</a></li>\n")
	}
	b.WriteString("</ul></body></html>\n")
	ctx.SetBody(b.Bytes())
}

// htmlText escapes a name for an HTML page, replacing bytes that are not
// UTF-8 (a name stored before such names were refused) by U+FFFD.
func htmlText(s string) string {
	return html.EscapeString(strings.ToValidUTF8(s, "\uFFFD"))
}

func dirSlash(p string) string {
	if p == "/" {
		return ""
	}
	return "/"
}
