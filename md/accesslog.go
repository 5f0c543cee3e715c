package md

import (
	"log/slog"
	"net/url"

	"github.com/valyala/fasthttp"

	"shoal/internal/accesslog"
	"shoal/wire"
)

// md's request logs (internal/accesslog): one access line per namespace
// request (Options.AccessLog) and one audit line per mutation
// (Options.AuditLog). Every answer echoes X-Request-Id.

var hdrRequestID = []byte(wire.HeaderRequestID)

// maxRequestID bounds the X-Request-Id md keeps from a client.
const maxRequestID = wire.MaxRequestID

// setRequestID takes the client's X-Request-Id, or makes one.
func (st *reqState) setRequestID(ctx *fasthttp.RequestCtx) {
	st.idLen = len(accesslog.AppendRequestID(st.id[:0], ctx.Request.Header.PeekBytes(hdrRequestID)))
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
	audit := s.opts.AuditLog != nil && accesslog.IsMutation(ctx.Method()) && ctx.Response.StatusCode() < 400
	if s.opts.AccessLog == nil && !audit {
		return
	}
	l := accesslog.Line{ID: st.id[:st.idLen], Principal: principalOf(ctx).ID, Start: st.start}
	if st.havePath {
		l.Path = st.path
	}
	if s.opts.AccessLog != nil {
		accesslog.Access(s.base, s.opts.AccessLog, ctx, &l)
	}
	if audit {
		accesslog.Audit(s.base, s.opts.AuditLog, ctx, &l, s.auditMore(ctx)...)
	}
}

// auditMore is what an audit line says of a MOVE or COPY: where it went
// (the other side of a third-party copy, see tpcAudit); of any other
// write nothing, found without parsing a header.
func (s *Server) auditMore(ctx *fasthttp.RequestCtx) []slog.Attr {
	m := ctx.Method()
	if string(m) != "MOVE" && string(m) != "COPY" {
		return nil
	}
	if string(m) == "COPY" {
		if a, ok := s.tpcAudit(ctx); ok {
			return []slog.Attr{a}
		}
	}
	if dst, err := parseDestination(ctx.Request.Header.PeekBytes(hdrDestination)); err == nil {
		return []slog.Attr{slog.String("destination", dst)}
	}
	return nil
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
