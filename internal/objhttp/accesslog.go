package objhttp

import (
	"fmt"
	"log/slog"
	"regexp"
	"time"

	"github.com/valyala/fasthttp"

	"shoal/internal/netguard"
	"shoal/sign"
	"shoal/wire"
)

// LogAccess writes the access line of an object request a data server or
// gw answered: md's request id and the principal md signed into the URL
// (sign.ParamPrincipal), the method, the object, the status, the bytes
// (received for a PUT, sent otherwise) and the duration. It never logs a
// header (davix and gfal2 resend the client's Authorization to the data
// server) nor the query (the signature). A request refused with 403 (a
// bad or expired signature) names the principal "-": its URL proves
// nothing.
func LogAccess(log *slog.Logger, ctx *fasthttp.RequestCtx, object string) {
	h := log.Handler()
	if !h.Enabled(ctx, slog.LevelInfo) {
		return
	}
	args := ctx.QueryArgs()
	status := ctx.Response.StatusCode()
	who := "-"
	if status != fasthttp.StatusForbidden {
		if w := args.Peek(sign.ParamPrincipal); len(w) > 0 && len(w) <= 512 {
			who = string(w)
		}
	}
	var n int64
	switch {
	case ctx.IsPut():
		n = int64(max(ctx.Request.Header.ContentLength(), 0))
	case ctx.IsHead():
	default:
		n = netguard.SentLength(ctx)
	}
	r := slog.NewRecord(time.Now(), slog.LevelInfo, "access", 0)
	r.AddAttrs(
		slog.String("id", string(wire.AppendRequestID(nil, args.Peek(wire.ParamRequestID)))),
		slog.String("principal", who),
		slog.String("method", string(ctx.Method())),
		slog.String("object", object),
		slog.Int("status", status),
		slog.Int64("bytes", n),
		slog.Duration("duration", time.Since(ctx.Time())),
	)
	_ = h.Handle(ctx, r)
}

// FastHTTPLogger sends fasthttp's own messages (connections it could not
// serve: malformed requests, timeouts) to log instead of fasthttp's
// default logger on stderr. With SecureErrorLogMessage (NewHTTPServer)
// fasthttp leaves the request's headers out, but a malformed header line
// is still quoted (and may be an Authorization header), so every quoted
// part except the connection's addresses is redacted.
func FastHTTPLogger(log *slog.Logger) fasthttp.Logger { return fasthttpLogger{log} }

type fasthttpLogger struct{ log *slog.Logger }

func (l fasthttpLogger) Printf(format string, args ...any) {
	l.log.Info(RedactQuoted(fmt.Sprintf(format, args...)), "source", "fasthttp")
}

// quoted is a Go-quoted string in a message; address is one that is only
// an address and port.
var (
	quoted  = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	address = regexp.MustCompile(`^"[0-9A-Fa-f.:\[\]%]*"$`)
)

// RedactQuoted replaces the quoted parts of msg that are not addresses by
// "[redacted]".
func RedactQuoted(msg string) string {
	return quoted.ReplaceAllStringFunc(msg, func(q string) string {
		if address.MatchString(q) {
			return q
		}
		return `"[redacted]"`
	})
}
