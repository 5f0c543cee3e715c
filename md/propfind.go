package md

import (
	"bufio"
	"io"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/dav"
	"shoal/internal/httperr"
	"shoal/internal/objhttp"
)

// readXMLBody reads a request body of at most MaxXMLBody bytes (413
// beyond).
func (s *Server) readXMLBody(ctx *fasthttp.RequestCtx, op string) ([]byte, error) {
	max := s.opts.MaxXMLBody
	if cl := ctx.Request.Header.ContentLength(); cl == 0 || cl == -2 {
		return nil, nil
	} else if int64(cl) > max {
		objhttp.CloseUnread(ctx)
		return nil, shoal.Errorf(op, shoal.KindTooLarge, "XML body larger than %d bytes", max)
	}
	r := ctx.RequestBodyStream()
	if r == nil {
		b := ctx.Request.Body()
		if int64(len(b)) > max {
			return nil, shoal.Errorf(op, shoal.KindTooLarge, "XML body larger than %d bytes", max)
		}
		return b, nil
	}
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, shoal.E(op, shoal.KindInvalid, err)
	}
	if int64(len(b)) > max {
		objhttp.CloseUnread(ctx)
		return nil, shoal.Errorf(op, shoal.KindTooLarge, "XML body larger than %d bytes", max)
	}
	return b, nil
}

// handlePropfind answers PROPFIND Depth 0 and 1 with a multistatus; a
// Depth 1 reply lists the collection itself first. Depth infinity
// (also a missing Depth) is refused with 403 and the
// DAV:propfind-finite-depth precondition (RFC 4918 9.1).
func (s *Server) handlePropfind(ctx *fasthttp.RequestCtx) {
	const op = "PROPFIND"
	path, _, err := requestPath(ctx)
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	depth, ok := dav.ParseDepth(ctx.Request.Header.PeekBytes(hdrDepth))
	switch {
	case !ok:
		fail(ctx, op, shoal.KindInvalid, "Depth must be 0, 1 or infinity")
		return
	case depth == dav.DepthInfinity:
		objhttp.CloseUnread(ctx)
		httperr.SetKind(ctx, shoal.KindForbiddenDepth)
		ctx.Response.Header.SetContentTypeBytes(dav.ContentTypeXML)
		ctx.SetBody(dav.FiniteDepthBody)
		return
	}
	body, err := s.readXMLBody(ctx, op)
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	req, err := dav.ParsePropfind(body)
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	e, err := s.stat(ctx, path)
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	buf := getBuf()
	lv := dav.NewLiveProps(propSource{s}, path, depth == 1 && e.IsDir)
	b := append(buf.b[:0], dav.MultistatusOpen...)
	if b, err = s.appendResponse(b, &lv, e, req); err != nil {
		putBuf(buf)
		httperr.Write(ctx, err)
		return
	}
	var l *davListing
	if depth == 1 && e.IsDir {
		// The first page is read before the status is sent, so that a
		// catalog error is still a plain error answer.
		l = &davListing{srv: s, lv: lv, req: req, dir: e}
		if b, err = l.nextPage(b); err != nil {
			putBuf(buf)
			httperr.Write(ctx, err)
			return
		}
	}
	ctx.SetStatusCode(fasthttp.StatusMultiStatus)
	ctx.Response.Header.SetContentTypeBytes(dav.ContentTypeXML)
	if l == nil || l.done {
		b = append(b, dav.MultistatusClose...)
		ctx.SetBody(b)
		buf.b = b
		putBuf(buf)
		return
	}
	// A large collection streams page by page (chunked), in bounded
	// memory, the first rows sent before the catalog read ends.
	buf.b = b
	httperr.StreamWriter(ctx, func(w *bufio.Writer) { l.stream(w, buf) })
}

// listPageSize is how many children a listing reads from the catalog at a
// time: large enough that a page query costs little per entry, small
// enough that a page's rows and XML stay well under a megabyte.
const listPageSize = 512

// davListing is a PROPFIND Depth 1 of a collection, answered a page of
// children at a time.
type davListing struct {
	srv   *Server
	lv    dav.LiveProps
	req   *dav.Propfind
	dir   *shoal.Entry
	after string // the last name listed
	done  bool   // the last page has been appended
}

// nextPage reads the next page of children and appends their responses.
func (l *davListing) nextPage(b []byte) ([]byte, error) {
	p, err := l.srv.cat.ListPage(l.srv.base, l.dir.Path, l.after, listPageSize, l.req.NeedsDead())
	if err != nil {
		return b, err
	}
	for i, c := range p.Entries {
		var dead []shoal.Prop
		if p.Props != nil {
			dead = p.Props[i]
		}
		if b, err = l.lv.AppendResponse(b, c, l.req, dead); err != nil {
			return b, err
		}
	}
	if len(p.Entries) > 0 {
		l.after = p.Entries[len(p.Entries)-1].Name()
	}
	l.done = !p.More || len(p.Entries) == 0
	return b, nil
}

// stream sends what buf holds, then the following pages as they are
// read. A catalog error after the status was sent ends the listing with a
// 507 response for the collection (RFC 4918 9.1: the results were
// truncated), so the document stays well-formed and says it is partial.
func (l *davListing) stream(w *bufio.Writer, buf *buffer) {
	defer putBuf(buf)
	for {
		if _, err := w.Write(buf.b); err != nil {
			return // the client went away
		}
		if l.done {
			break
		}
		if err := w.Flush(); err != nil {
			return
		}
		b, err := l.nextPage(buf.b[:0])
		if err != nil {
			b = dav.AppendTruncated(b[:0], l.dir.Path, err)
			l.done = true
		}
		buf.b = b
	}
	w.Write([]byte(dav.MultistatusClose))
}

// appendResponse appends one <D:response> for e, reading its dead
// properties if req needs them.
func (s *Server) appendResponse(b []byte, lv *dav.LiveProps, e *shoal.Entry, req *dav.Propfind) ([]byte, error) {
	var dead []shoal.Prop
	if req.NeedsDead() {
		var err error
		if dead, err = s.cat.Props(s.base, e.Path); err != nil {
			return b, err
		}
	}
	return lv.AppendResponse(b, e, req, dead)
}
