// Package logline writes log lines fast for logs that write one per
// request (access logs): a slog.Handler that writes the same bytes as
// slog's TextHandler or JSONHandler for plain values at a fraction of the
// cost, and a Buffer of whole lines so a request does not cost a write(2).
//
// It imports only the standard library.
package logline

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// Handler writes the same lines as slog's TextHandler or JSONHandler
// (TestHandlerMatchesSlog compares them byte for byte) for records
// whose attributes are plain values (strings, numbers, booleans,
// durations, times), at a fraction of the cost: the access log writes one
// per request, and slog's general handlers cost a stat request more than
// md's own work. Anything else (groups, LogValuers, other kinds) goes to
// the slog handler it stands for.
type Handler struct {
	json   bool
	level  slog.Level
	w      io.Writer
	prefix []byte       // attributes added with WithAttrs, already written
	slow   slog.Handler // slog's own handler, same output, for the rest
}

// NewHandler writes lines of the JSON (json) or text format, of level
// and up, to w.
func NewHandler(w io.Writer, json bool, level slog.Level) *Handler {
	opts := &slog.HandlerOptions{Level: level}
	h := &Handler{json: json, level: level, w: w}
	if json {
		h.slow = slog.NewJSONHandler(w, opts)
	} else {
		h.slow = slog.NewTextHandler(w, opts)
	}
	return h
}

func (h *Handler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

var linePool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	bp := linePool.Get().(*[]byte)
	b := (*bp)[:0]
	if h.json {
		b = append(b, '{')
		if !r.Time.IsZero() {
			b = append(b, `"time":"`...)
			b = r.Time.AppendFormat(b, time.RFC3339Nano)
			b = append(b, `",`...)
		}
		b = append(b, `"level":`...)
		b = appendJSONString(b, r.Level.String())
		b = append(b, `,"msg":`...)
		b = appendJSONString(b, r.Message)
	} else {
		if !r.Time.IsZero() {
			b = append(b, "time="...)
			b = appendRFC3339Millis(b, r.Time)
			b = append(b, ' ')
		}
		b = append(b, "level="...)
		b = appendTextString(b, r.Level.String())
		b = append(b, " msg="...)
		b = appendTextString(b, r.Message)
	}
	b = append(b, h.prefix...)
	plain := true
	r.Attrs(func(a slog.Attr) bool {
		if plain = plainValue(a.Value); plain {
			b = h.appendAttr(b, a)
		}
		return plain
	})
	if !plain {
		*bp = b
		linePool.Put(bp)
		return h.slow.Handle(ctx, r)
	}
	if h.json {
		b = append(b, '}')
	}
	b = append(b, '\n')
	_, err := h.w.Write(b)
	if cap(b) <= 16<<10 {
		*bp = b
		linePool.Put(bp)
	}
	return err
}

// plainValue reports whether the fast path writes v.
func plainValue(v slog.Value) bool {
	switch v.Kind() {
	case slog.KindString, slog.KindInt64, slog.KindUint64, slog.KindBool, slog.KindDuration, slog.KindTime:
		return true
	}
	return false
}

func (h *Handler) appendAttr(b []byte, a slog.Attr) []byte {
	if a.Equal(slog.Attr{}) {
		return b // slog drops empty attributes
	}
	v := a.Value
	if h.json {
		b = append(b, ',')
		b = appendJSONString(b, a.Key)
		b = append(b, ':')
		switch v.Kind() {
		case slog.KindString:
			return appendJSONString(b, v.String())
		case slog.KindInt64:
			return strconv.AppendInt(b, v.Int64(), 10)
		case slog.KindUint64:
			return strconv.AppendUint(b, v.Uint64(), 10)
		case slog.KindBool:
			return strconv.AppendBool(b, v.Bool())
		case slog.KindDuration:
			return strconv.AppendInt(b, int64(v.Duration()), 10)
		case slog.KindTime:
			b = append(b, '"')
			b = v.Time().AppendFormat(b, time.RFC3339Nano)
			return append(b, '"')
		}
		return b
	}
	b = append(b, ' ')
	b = appendTextString(b, a.Key)
	b = append(b, '=')
	switch v.Kind() {
	case slog.KindString:
		return appendTextString(b, v.String())
	case slog.KindInt64:
		return strconv.AppendInt(b, v.Int64(), 10)
	case slog.KindUint64:
		return strconv.AppendUint(b, v.Uint64(), 10)
	case slog.KindBool:
		return strconv.AppendBool(b, v.Bool())
	case slog.KindDuration:
		return appendTextString(b, v.Duration().String())
	case slog.KindTime:
		return appendRFC3339Millis(b, v.Time())
	}
	return b
}

func (h *Handler) WithAttrs(as []slog.Attr) slog.Handler {
	for _, a := range as {
		if !plainValue(a.Value) {
			return h.slow.WithAttrs(as)
		}
	}
	c := *h
	c.prefix = append([]byte(nil), h.prefix...)
	for _, a := range as {
		c.prefix = h.appendAttr(c.prefix, a)
	}
	c.slow = h.slow.WithAttrs(as)
	return &c
}

func (h *Handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return h.slow.WithGroup(name) // groups: slog's own handler
}

// appendRFC3339Millis is slog's text time: RFC 3339, milliseconds.
func appendRFC3339Millis(b []byte, t time.Time) []byte {
	const prefixLen = len("2006-01-02T15:04:05.000")
	n := len(b)
	t = t.Truncate(time.Millisecond).Add(time.Millisecond / 10)
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b[:n+prefixLen], b[n+prefixLen+1:]...)
}

// appendTextString writes s as slog's TextHandler does: bare, or quoted
// when it is empty or holds a space, '=', '"', a control character or a
// rune that is not printable.
func appendTextString(b []byte, s string) []byte {
	if textNeedsQuoting(s) {
		return strconv.AppendQuote(b, s)
	}
	return append(b, s...)
}

// quoteASCII marks the ASCII bytes that make TextHandler quote a value.
var quoteASCII = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = c != '\\' && (c == ' ' || c == '=' || !jsonSafe(byte(c)))
	}
	return t
}()

func textNeedsQuoting(s string) bool {
	if s == "" {
		return true
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if quoteASCII[c] {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return true
		}
		i += size
	}
	return false
}

// jsonSafe reports whether an ASCII byte goes into a JSON string as is.
func jsonSafe(c byte) bool { return c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf }

// appendJSONString writes s as a JSON string as slog's JSONHandler does.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if jsonSafe(c) {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
