package md

import (
	"encoding/xml"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/internal/httperr"
)

// handleProppatch sets and removes dead properties, in document order,
// all or none (Catalog.PatchProps is atomic). Live properties are
// protected: if any is touched nothing changes, and the multistatus says
// 403 for those and 424 (failed dependency) for the rest.
func (s *Server) handleProppatch(ctx *fasthttp.RequestCtx) {
	const op = "PROPPATCH"
	path, _, err := requestPath(ctx)
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	body, err := s.readXMLBody(ctx, op)
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	if len(body) == 0 {
		fail(ctx, op, shoal.KindInvalid, "PROPPATCH needs a propertyupdate body")
		return
	}
	ops, err := parseProppatch(body)
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	if err := s.checkWrite(ctx, path, false); err != nil {
		httperr.Write(ctx, err)
		return
	}
	if err := s.checkConditions(ctx, path); err != nil {
		httperr.Write(ctx, err)
		return
	}
	e, err := s.stat(ctx, path)
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	var protected, others []xml.Name
	for _, o := range ops {
		n := xml.Name{Space: o.prop.Space, Local: o.prop.Name}
		if isLive(n) {
			protected = append(protected, n)
		} else {
			others = append(others, n)
		}
	}
	if len(protected) == 0 {
		set, remove := collapse(ops)
		if err := s.patchPool(e, set); err != nil {
			httperr.Write(ctx, err)
			return
		}
		if err := s.cat.PatchProps(s.base, path, set, remove); err != nil {
			httperr.Write(ctx, err)
			return
		}
	}
	buf := getBuf()
	defer putBuf(buf)
	b := append(buf.b[:0], multistatusOpen...)
	b = append(b, "<D:response>"...)
	b = appendHref(b, e.Path, e.IsDir)
	if len(protected) > 0 {
		b = appendProtected(b, protected)
		b = appendPropstat(b, others, 424)
	} else {
		b = appendPropstat(b, others, 200)
	}
	b = append(b, "</D:response>"...)
	b = append(b, multistatusClose...)
	buf.b = b
	ctx.SetStatusCode(fasthttp.StatusMultiStatus)
	ctx.Response.Header.SetContentTypeBytes(ctXML)
	ctx.SetBody(b)
}

// collapse turns ops in document order into the final set and remove
// lists: the last operation on a property wins.
func collapse(ops []patchOp) (set, remove []shoal.Prop) {
	last := make(map[xml.Name]int, len(ops))
	for i, o := range ops {
		last[xml.Name{Space: o.prop.Space, Local: o.prop.Name}] = i
	}
	for i, o := range ops {
		if last[xml.Name{Space: o.prop.Space, Local: o.prop.Name}] != i {
			continue
		}
		if o.remove {
			remove = append(remove, shoal.Prop{Space: o.prop.Space, Name: o.prop.Name})
		} else {
			set = append(set, o.prop)
		}
	}
	return set, remove
}

// appendProtected appends the 403 propstat of live properties a PROPPATCH
// tried to change, with the precondition that failed (RFC 4918 §16:
// DAV:cannot-modify-protected-property; the quota properties of RFC 4331
// are among them).
func appendProtected(b []byte, names []xml.Name) []byte {
	b = appendPropstat(b, names, 403)
	b = b[:len(b)-len("</D:propstat>")]
	b = append(b, "<D:error><D:cannot-modify-protected-property/></D:error>"...)
	return append(b, "</D:propstat>"...)
}

// appendPropstat appends one propstat naming props with status code.
func appendPropstat(b []byte, names []xml.Name, code int) []byte {
	if len(names) == 0 {
		return b
	}
	b = appendPropstatOpen(b)
	seen := make(map[xml.Name]bool, len(names))
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			b = appendOpen(b, n, true)
		}
	}
	return appendPropstatClose(b, code)
}
