package md

import (
	"bufio"
	"encoding/xml"
	"io"
	"sync"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/internal/httperr"
)

var finiteDepthBody = []byte(xmlHeader + "<D:error xmlns:D=\"DAV:\"><D:propfind-finite-depth/></D:error>\n")

// readXMLBody reads a request body of at most MaxXMLBody bytes (413
// beyond).
func (s *Server) readXMLBody(ctx *fasthttp.RequestCtx, op string) ([]byte, error) {
	max := s.opts.MaxXMLBody
	if cl := ctx.Request.Header.ContentLength(); cl == 0 || cl == -2 {
		return nil, nil
	} else if int64(cl) > max {
		ctx.SetConnectionClose()
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
		ctx.SetConnectionClose()
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
	depth := 0
	switch d := trimSpace(ctx.Request.Header.PeekBytes(hdrDepth)); {
	case len(d) == 1 && d[0] == '0':
	case len(d) == 1 && d[0] == '1':
		depth = 1
	case len(d) == 0, equalFold(d, "infinity"):
		ctx.SetConnectionClose()
		httperr.SetKind(ctx, shoal.KindForbiddenDepth)
		ctx.Response.Header.SetContentTypeBytes(ctXML)
		ctx.SetBody(finiteDepthBody)
		return
	default:
		fail(ctx, op, shoal.KindInvalid, "Depth must be 0, 1 or infinity")
		return
	}
	body, err := s.readXMLBody(ctx, op)
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	req := allpropReq
	if len(body) > 0 {
		if req, err = parsePropfindCached(body); err != nil {
			httperr.Write(ctx, err)
			return
		}
	}
	e, err := s.stat(ctx, path)
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	buf := getBuf()
	lv := liveValues{srv: s, target: path, listing: depth == 1 && e.IsDir}
	b := append(buf.b[:0], multistatusOpen...)
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
	ctx.Response.Header.SetContentTypeBytes(ctXML)
	if l == nil || l.done {
		b = append(b, multistatusClose...)
		ctx.SetBody(b)
		buf.b = b
		putBuf(buf)
		return
	}
	// A large collection streams page by page (chunked), in bounded
	// memory, the first rows sent before the catalog read ends.
	buf.b = b
	ctx.SetBodyStreamWriter(func(w *bufio.Writer) { l.stream(w, buf) })
}

// listPageSize is how many children a listing reads from the catalog at a
// time: large enough that a page query costs little per entry, small
// enough that a page's rows and XML stay well under a megabyte.
const listPageSize = 512

// davListing is a PROPFIND Depth 1 of a collection, answered a page of
// children at a time.
type davListing struct {
	srv   *Server
	lv    liveValues
	req   *propfindReq
	dir   *shoal.Entry
	after string // the last name listed
	done  bool   // the last page has been appended
}

// nextPage reads the next page of children and appends their responses.
func (l *davListing) nextPage(b []byte) ([]byte, error) {
	p, err := l.srv.cat.ListPage(l.srv.base, l.dir.Path, l.after, listPageSize, needsDead(l.req))
	if err != nil {
		return b, err
	}
	for i, c := range p.Entries {
		var dead []shoal.Prop
		if p.Props != nil {
			dead = p.Props[i]
		}
		if b, err = l.srv.appendResponseWith(b, &l.lv, c, l.req, dead); err != nil {
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
			b = appendTruncated(b[:0], l.dir.Path, err)
			l.done = true
		}
		buf.b = b
	}
	w.Write([]byte(multistatusClose))
}

var allpropReq = &propfindReq{kind: findAllProp}

// needsDead reports whether answering req needs the entry's dead
// properties (a catalog query).
func needsDead(req *propfindReq) bool {
	if req.kind != findProp {
		return true
	}
	for _, n := range req.names {
		if !isLive(n) {
			return true
		}
	}
	return false
}

// appendResponse appends one <D:response> for e, reading its dead
// properties if req needs them.
func (s *Server) appendResponse(b []byte, lv *liveValues, e *shoal.Entry, req *propfindReq) ([]byte, error) {
	var dead []shoal.Prop
	if needsDead(req) {
		var err error
		if dead, err = s.cat.Props(s.base, e.Path); err != nil {
			return b, err
		}
	}
	return s.appendResponseWith(b, lv, e, req, dead)
}

// appendResponseWith appends one <D:response> for e whose dead
// properties are dead.
func (s *Server) appendResponseWith(b []byte, lv *liveValues, e *shoal.Entry, req *propfindReq, dead []shoal.Prop) ([]byte, error) {
	b = append(b, "<D:response>"...)
	b = appendHref(b, e.Path, e.IsDir)
	switch req.kind {
	case findAllProp:
		b = appendPropstatOpen(b)
		for _, n := range allpropLive {
			b, _, _ = lv.appendLive(b, e, n)
		}
		for _, p := range dead {
			b = appendDead(b, &p)
		}
		var missingBuf [8]xml.Name // most requests miss a few: no allocation
		missing := missingBuf[:0]
		for _, n := range req.include {
			if isLive(n) && !isAllprop(n) {
				var ok bool
				var err error
				if b, ok, err = lv.appendLive(b, e, n); err != nil || !ok {
					missing = append(missing, n)
				}
			}
		}
		b = appendPropstatClose(b, 200)
		b = appendMissing(b, missing)
	case findPropName:
		b = appendPropstatOpen(b)
		names := propnameFileLive
		if e.IsDir {
			names = propnameDirLive
		}
		for _, n := range names {
			b = appendOpen(b, n, true)
		}
		for _, p := range dead {
			b = appendOpen(b, xml.Name{Space: p.Space, Local: p.Name}, true)
		}
		b = appendPropstatClose(b, 200)
	case findProp:
		var missingBuf [8]xml.Name // most requests miss a few: no allocation
		missing := missingBuf[:0]
		mark := len(b)
		b = appendPropstatOpen(b)
		found := false
		for _, n := range req.names {
			ok := false
			if isLive(n) {
				var err error
				if b, ok, err = lv.appendLive(b, e, n); err != nil {
					return b, err
				}
			} else {
				for i := range dead {
					if dead[i].Space == n.Space && dead[i].Name == n.Local {
						b = appendDead(b, &dead[i])
						ok = true
						break
					}
				}
			}
			if ok {
				found = true
			} else {
				missing = append(missing, n)
			}
		}
		if found {
			b = appendPropstatClose(b, 200)
		} else {
			b = b[:mark]
		}
		b = appendMissing(b, missing)
	}
	return append(b, "</D:response>"...), nil
}

func isAllprop(n xml.Name) bool {
	for _, a := range allpropLive {
		if a == n {
			return true
		}
	}
	return false
}

// appendDead appends a dead property with its stored value.
func appendDead(b []byte, p *shoal.Prop) []byte {
	n := xml.Name{Space: p.Space, Local: p.Name}
	if p.Value == "" {
		return appendOpen(b, n, true)
	}
	b = appendOpen(b, n, false)
	b = append(b, p.Value...)
	return appendClose(b, n)
}

// appendMissing appends a 404 propstat for properties the entry lacks.
func appendMissing(b []byte, missing []xml.Name) []byte {
	if len(missing) == 0 {
		return b
	}
	b = appendPropstatOpen(b)
	for _, n := range missing {
		b = appendOpen(b, n, true)
	}
	return appendPropstatClose(b, 404)
}

// Clients send the same few PROPFIND bodies over and over. They are read
// by recognizePropfind, a byte scanner for the shapes clients use, and
// only the rest by encoding/xml (which costs more than the rest of the
// request); either way the result is remembered (a bounded set: bodies
// come from clients), so a repeated body costs a map lookup.
const (
	propfindCacheMax     = 256
	propfindCacheBodyMax = 4096
)

var (
	propfindMu    sync.RWMutex
	propfindCache = map[string]*propfindReq{}
)

// parsePropfindCached is parsePropfind with the fast path and
// memoization. The returned request is shared and must not be modified.
func parsePropfindCached(body []byte) (*propfindReq, error) {
	if len(body) > propfindCacheBodyMax {
		return parsePropfindFast(body)
	}
	propfindMu.RLock()
	req, ok := propfindCache[b2s(body)]
	propfindMu.RUnlock()
	if ok {
		return req, nil
	}
	req, err := parsePropfindFast(body)
	if err != nil {
		return nil, err
	}
	propfindMu.Lock()
	if len(propfindCache) < propfindCacheMax {
		propfindCache[string(body)] = req
	}
	propfindMu.Unlock()
	return req, nil
}

// parsePropfindFast is parsePropfind, through recognizePropfind when the
// body is one of the common shapes.
func parsePropfindFast(body []byte) (*propfindReq, error) {
	if req, ok := recognizePropfind(body); ok {
		return req, nil
	}
	return parsePropfind(body)
}
