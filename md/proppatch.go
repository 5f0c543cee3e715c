package md

import (
	"strings"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/dav"
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
	ops, err := dav.ParseProppatch(body)
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
	protected, others := dav.SplitProtected(ops)
	if len(protected) == 0 {
		set, remove := dav.Collapse(ops)
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
	buf.b = dav.AppendPatchResponse(buf.b[:0], e, protected, others)
	ctx.SetStatusCode(fasthttp.StatusMultiStatus)
	ctx.Response.Header.SetContentTypeBytes(dav.ContentTypeXML)
	ctx.SetBody(buf.b)
}

// PoolProp is the shoal property a PROPPATCH sets on a collection to map
// it to a pool (when Options.AllowPoolProppatch): <s:pool
// xmlns:s="http://shoal.dev/ns">NAME</s:pool>.
const (
	NamespaceShoal = "http://shoal.dev/ns"
	PoolPropName   = "pool"
)

// patchPool applies a shoal:pool property among a PROPPATCH's sets: it
// maps the collection to the pool (KindPermission unless allowed,
// KindNotDir on a file). Removing the property does not unmap.
func (s *Server) patchPool(e *shoal.Entry, set []shoal.Prop) error {
	for _, p := range set {
		if p.Space != NamespaceShoal || p.Name != PoolPropName {
			continue
		}
		if !s.opts.AllowPoolProppatch {
			return shoal.Errorf("PROPPATCH", shoal.KindPermission, "setting the pool by PROPPATCH is disabled (md.allow_pool_proppatch)")
		}
		if !e.IsDir {
			return shoal.Errorf("PROPPATCH", shoal.KindNotDir, "a pool is set on a collection")
		}
		dir, _, err := shoal.CleanPath(e.Path)
		if err == nil {
			err = s.cat.SetDirPool(s.base, dir, strings.TrimSpace(p.Value))
		}
		if err != nil {
			return err
		}
	}
	return nil
}
