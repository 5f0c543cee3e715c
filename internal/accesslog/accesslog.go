// Package accesslog writes md's request logs: one access line per
// namespace request and one audit line per mutation md carried out or
// redirected to a data server, each with the request's id (the client's
// X-Request-Id, sanitized, or one made here) and principal. A line holds
// the clean path, never the query (a signature may be there), and no
// header: no token, password or cookie reaches a log. The lines are
// written through the logger's handler (internal/logline's, fast, in the
// binary).
//
// It must not import md or any server package: md hands it what it
// learned of the request (Line).
package accesslog

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"shoal/dav"
	"shoal/internal/netguard"
	"shoal/wire"
)

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

// AppendRequestID appends a request's id: the part of the client's
// X-Request-Id shoal keeps (wire.AppendRequestID: at most
// wire.MaxRequestID bytes), or a new one when it sent none usable.
func AppendRequestID(dst, client []byte) []byte {
	start := len(dst)
	dst = wire.AppendRequestID(dst, client)
	if len(dst) == start {
		dst = append(dst, idPrefix...)
		dst = strconv.AppendUint(dst, idSeq.Add(1), 16)
	}
	return dst
}

// Line is what md knows of a request that its response does not say.
type Line struct {
	ID        []byte // the request id
	Principal string // who it acted as
	// Path is the request's clean path; "" when admission did not parse
	// one (a malformed path): the raw path is logged then, without its
	// query.
	Path  string
	Start time.Time
}

// IsMutation reports whether a method changes the namespace (and so gets
// an audit line).
func IsMutation(m []byte) bool {
	switch string(m) {
	case "PUT", "MKCOL", "DELETE", "MOVE", "COPY", "PROPPATCH", "LOCK", "UNLOCK":
		return true
	}
	return false
}

// methodName is the method as a constant string (no allocation) for the
// methods md knows, else the client's, bounded.
func methodName(m []byte) string {
	if name := dav.Method(m); name != "" {
		return name
	}
	if len(m) > 16 {
		m = m[:16]
	}
	return string(wire.AppendRequestID(nil, m))
}

// path is l's path, or the raw path of rc without its query, bounded.
func (l *Line) path(rc *fasthttp.RequestCtx) string {
	if l.Path != "" {
		return l.Path
	}
	raw := rc.Request.URI().PathOriginal()
	for i, c := range raw {
		if c == '?' {
			raw = raw[:i]
			break
		}
	}
	if len(raw) > 1024 {
		raw = raw[:1024]
	}
	return string(raw)
}

// Access writes the access line of rc, answered, to log.
func Access(ctx context.Context, log *slog.Logger, rc *fasthttp.RequestCtx, l *Line) {
	// The handler directly rather than log.LogAttrs: a Logger records the
	// caller's PC (runtime.Callers), a tenth of a stat's time, for a
	// source nobody asked for.
	h := log.Handler()
	if !h.Enabled(ctx, slog.LevelInfo) {
		return
	}
	var n int64
	if !rc.IsHead() {
		n = netguard.SentLength(rc)
	}
	r := slog.NewRecord(time.Now(), slog.LevelInfo, "access", 0)
	r.AddAttrs(
		slog.String("id", string(l.ID)),
		slog.String("principal", l.Principal),
		slog.String("method", methodName(rc.Method())),
		slog.String("path", l.path(rc)),
		slog.Int("status", rc.Response.StatusCode()),
		slog.Int64("bytes", n),
		slog.Duration("duration", time.Since(l.Start)),
	)
	_ = h.Handle(ctx, r) // a log that cannot be written must not fail the request
}

// Audit writes the audit line of rc, a mutation md answered, to log,
// with what md adds (where a MOVE or COPY went, say).
func Audit(ctx context.Context, log *slog.Logger, rc *fasthttp.RequestCtx, l *Line, extra ...slog.Attr) {
	attrs := []slog.Attr{
		slog.String("id", string(l.ID)),
		slog.String("principal", l.Principal),
		slog.String("method", methodName(rc.Method())),
		slog.String("path", l.path(rc)),
		slog.Int("status", rc.Response.StatusCode()),
	}
	if rc.IsPut() && rc.Response.StatusCode() == fasthttp.StatusTemporaryRedirect {
		attrs = append(attrs, slog.String("note", "redirected to a data server, which commits the upload"))
	}
	// The handler directly, as in Access: no caller's PC to record.
	h := log.Handler()
	if !h.Enabled(ctx, slog.LevelInfo) {
		return
	}
	r := slog.NewRecord(time.Now(), slog.LevelInfo, "audit", 0)
	r.AddAttrs(attrs...)
	r.AddAttrs(extra...)
	_ = h.Handle(ctx, r) // a log that cannot be written must not fail the request
}
