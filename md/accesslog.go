package md

import (
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"shoal/wire"
)

// md's request logs: one access line per namespace request
// (Options.AccessLog) and one audit line per mutation it carried out or
// redirected to a data server (Options.AuditLog), each with the request's
// id and principal. A line holds the clean path, never the query (a
// signature may be there), and no header: no token, password or cookie
// reaches a log. Every answer echoes X-Request-Id.

var hdrRequestID = []byte(wire.HeaderRequestID)

// maxRequestID bounds the X-Request-Id md keeps from a client.
const maxRequestID = wire.MaxRequestID

// Generated ids: a random prefix per process (md replicas do not collide)
// and a counter.
var (
	idPrefix = func() []byte {
		var b [6]byte
		if _, err := rand.Read(b[:]); err != nil {
			panic(err)
		}
		return []byte(hex.EncodeToString(b[:]) + "-")
	}()
	idSeq atomic.Uint64
)

// setRequestID takes the client's X-Request-Id, or makes one.
func (st *reqState) setRequestID(ctx *fasthttp.RequestCtx) {
	id := wire.AppendRequestID(st.id[:0], ctx.Request.Header.PeekBytes(hdrRequestID))
	if len(id) == 0 {
		id = append(st.id[:0], idPrefix...)
		id = strconv.AppendUint(id, idSeq.Add(1), 16)
	}
	st.idLen = len(id)
}

// finish ends a namespace request md answered: it echoes the request id
// and writes the access and audit lines, once.
func (s *Server) finish(ctx *fasthttp.RequestCtx) {
	st := stateOf(ctx)
	if st == nil || st.logged {
		return
	}
	st.logged = true
	ctx.Response.Header.SetCanonical(hdrRequestID, st.id[:st.idLen]) // hdrRequestID is canonical: no normalizing
	if s.opts.AccessLog != nil {
		s.logAccess(ctx, st)
	}
	if s.opts.AuditLog != nil && isMutation(ctx.Method()) && ctx.Response.StatusCode() < 400 {
		s.logAudit(ctx, st)
	}
}

// isMutation reports whether a method changes the namespace.
func isMutation(m []byte) bool {
	switch string(m) {
	case "PUT", "MKCOL", "DELETE", "MOVE", "COPY", "PROPPATCH", "LOCK", "UNLOCK":
		return true
	}
	return false
}

// methodName is the method as a constant string (no allocation) for the
// methods md knows, else the client's, bounded.
func methodName(m []byte) string {
	switch string(m) {
	case "HEAD":
		return "HEAD"
	case "GET":
		return "GET"
	case "PROPFIND":
		return "PROPFIND"
	case "PUT":
		return "PUT"
	case "OPTIONS":
		return "OPTIONS"
	case "MKCOL":
		return "MKCOL"
	case "DELETE":
		return "DELETE"
	case "MOVE":
		return "MOVE"
	case "COPY":
		return "COPY"
	case "PROPPATCH":
		return "PROPPATCH"
	case "LOCK":
		return "LOCK"
	case "UNLOCK":
		return "UNLOCK"
	case "POST":
		return "POST"
	}
	if len(m) > 16 {
		m = m[:16]
	}
	return string(wire.AppendRequestID(nil, m))
}

// logPath is the request's clean path, or, when admission did not parse
// one (a malformed path), the raw path without its query.
func logPath(ctx *fasthttp.RequestCtx, st *reqState) string {
	if st.havePath {
		return st.path
	}
	raw := ctx.Request.URI().PathOriginal()
	if i := indexByte(raw, '?'); i >= 0 {
		raw = raw[:i]
	}
	if len(raw) > 1024 {
		raw = raw[:1024]
	}
	return string(raw)
}

func (s *Server) logAccess(ctx *fasthttp.RequestCtx, st *reqState) {
	// The handler directly rather than l.LogAttrs: a Logger records the
	// caller's PC (runtime.Callers), a tenth of a stat's time, for a
	// source nobody asked for.
	h := s.opts.AccessLog.Handler()
	if !h.Enabled(s.base, slog.LevelInfo) {
		return
	}
	n := 0
	if !ctx.IsHead() {
		if ctx.Response.IsBodyStream() {
			n = max(ctx.Response.Header.ContentLength(), 0)
		} else {
			n = len(ctx.Response.Body())
		}
	}
	r := slog.NewRecord(time.Now(), slog.LevelInfo, "access", 0)
	r.AddAttrs(
		slog.String("id", string(st.id[:st.idLen])),
		slog.String("principal", principalOf(ctx).ID),
		slog.String("method", methodName(ctx.Method())),
		slog.String("path", logPath(ctx, st)),
		slog.Int("status", ctx.Response.StatusCode()),
		slog.Int("bytes", n),
		slog.Duration("duration", time.Since(st.start)),
	)
	_ = h.Handle(s.base, r) // a log that cannot be written must not fail the request
}

func (s *Server) logAudit(ctx *fasthttp.RequestCtx, st *reqState) {
	attrs := []slog.Attr{
		slog.String("id", string(st.id[:st.idLen])),
		slog.String("principal", principalOf(ctx).ID),
		slog.String("method", methodName(ctx.Method())),
		slog.String("path", logPath(ctx, st)),
		slog.Int("status", ctx.Response.StatusCode()),
	}
	if ctx.IsPut() && ctx.Response.StatusCode() == fasthttp.StatusTemporaryRedirect {
		attrs = append(attrs, slog.String("note", "redirected to a data server, which commits the upload"))
	}
	if a, ok := s.tpcAudit(ctx); ok && string(ctx.Method()) == "COPY" {
		attrs = append(attrs, a)
	} else if m := ctx.Method(); string(m) == "MOVE" || string(m) == "COPY" {
		if dst, err := parseDestination(ctx.Request.Header.PeekBytes(hdrDestination)); err == nil {
			attrs = append(attrs, slog.String("destination", dst))
		}
	}
	s.opts.AuditLog.LogAttrs(s.base, slog.LevelInfo, "audit", attrs...)
}

// urlTag is what md writes into a signed data-server or gw URL about the
// request it makes the URL for: the principal (signed: the data server
// logs it) and the request id (not signed: for matching log lines).
type urlTag struct{ who, rid string }

// urlTagOf is the request's urlTag. Only requests that redirect or proxy
// make one, so the strings it allocates cost the stat path nothing.
func urlTagOf(ctx *fasthttp.RequestCtx) urlTag {
	st := stateOf(ctx)
	if st == nil {
		return urlTag{}
	}
	t := urlTag{rid: string(st.id[:st.idLen])}
	if st.p != nil {
		t.who = st.p.ID
	}
	return t
}

// tag adds the request id to a signed URL.
func (t urlTag) tag(u string) string {
	if t.rid == "" {
		return u
	}
	return u + "&" + wire.ParamRequestID + "=" + url.QueryEscape(t.rid)
}
