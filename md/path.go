package md

import (
	"strings"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/wire"
)

// requestPath is the clean user path of a namespace request. It reads the
// path as the client sent it (fasthttp's ctx.Path() would silently resolve
// "..", which md must refuse instead), ignores the query, and refuses the
// internal prefix. trailing reports a trailing slash: it addresses the same
// entry, so callers use it only to name collections.
func requestPath(ctx *fasthttp.RequestCtx) (clean string, trailing bool, err error) {
	if p, tr, ok := cachedPath(ctx); ok {
		return p, tr, nil // parsed by admission
	}
	uri := ctx.Request.URI()
	if len(uri.Hash()) > 0 {
		// A fragment is never sent by a correct client; ignoring it would
		// make DELETE /dir/#frag delete /dir.
		return "", false, shoal.Errorf("path", shoal.KindInvalid, "fragment in request URI")
	}
	raw := uri.PathOriginal()
	if i := indexByte(raw, '?'); i >= 0 {
		raw = raw[:i]
	}
	if len(raw) > 0 && raw[0] != '/' {
		// absolute-form request target: http://host/path
		if i := indexString(raw, "://"); i >= 0 {
			rest := raw[i+3:]
			j := indexByte(rest, '/')
			if j < 0 {
				raw = []byte("/")
			} else {
				raw = rest[j:]
			}
		}
	}
	// string(raw) is the one allocation of the stat path: the catalog and
	// its caches may keep the path string, so it must not alias the
	// request buffer.
	clean, trailing, err = shoal.CleanPath(string(raw))
	if err != nil {
		return "", false, err
	}
	if isInternal(clean) {
		return "", false, shoal.Errorf("path", shoal.KindPermission, "%s is reserved", wire.Prefix)
	}
	rememberPath(ctx, clean, trailing)
	return clean, trailing, nil
}

// isInternal reports whether a clean path lies under wire.Prefix.
func isInternal(clean string) bool {
	return shoal.IsWithin(clean, strings.TrimSuffix(wire.Prefix, "/"))
}
