package logline

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestHandlerMatchesSlog: the access log's handler writes what slog's
// TextHandler and JSONHandler write, byte for byte, including the values
// they quote or escape.
func TestHandlerMatchesSlog(t *testing.T) {
	at := time.Date(2026, 12, 1, 13, 55, 35, 15_123_456, time.UTC)
	strs := []string{"", "plain", "/a b/c", "x=y", `q"uote`, `back\slash`, "tab\there", "nl\nline", "\x00\x1f\x7f", "é ü", "zero\u200bwidth",
		"\u2028sep", "bad\xffutf8", "<html>&", "token:sub@https://iam.example.org/", strings.Repeat("long", 100)}
	for _, json := range []bool{false, true} {
		var fast, want bytes.Buffer
		fh := NewHandler(&fast, json, slog.LevelInfo).WithAttrs([]slog.Attr{slog.String("component", "gw")})
		opts := &slog.HandlerOptions{}
		var sh slog.Handler = slog.NewTextHandler(&want, opts)
		if json {
			sh = slog.NewJSONHandler(&want, opts)
		}
		sh = sh.WithAttrs([]slog.Attr{slog.String("component", "gw")})
		for i, s := range strs {
			r := slog.NewRecord(at, slog.LevelInfo, s, 0)
			r.AddAttrs(slog.String("id", s), slog.String(s+"k", "v"), slog.Int("status", 200+i), slog.Int64("neg", -7),
				slog.Uint64("u", 9), slog.Bool("ok", i%2 == 0), slog.Duration("duration", time.Duration(i)*1234567*time.Nanosecond),
				slog.Time("at", at), slog.Attr{})
			if err := fh.Handle(context.Background(), r); err != nil {
				t.Fatal(err)
			}
			if err := sh.Handle(context.Background(), r); err != nil {
				t.Fatal(err)
			}
		}
		// Values the fast path leaves to slog: the same output still.
		r := slog.NewRecord(at, slog.LevelWarn, "any", 0)
		r.AddAttrs(slog.Any("list", []int{1, 2}), slog.Group("g", slog.Int("a", 1)), slog.Float64("f", 0.5))
		fh.Handle(context.Background(), r)
		sh.Handle(context.Background(), r)
		fl, wl := strings.Split(fast.String(), "\n"), strings.Split(want.String(), "\n")
		if len(fl) != len(wl) {
			t.Fatalf("json=%v: %d lines, slog %d", json, len(fl), len(wl))
		}
		for i := range fl {
			if fl[i] != wl[i] {
				t.Errorf("json=%v line %d:\n got %s\nwant %s", json, i, fl[i], wl[i])
			}
		}
	}
	if NewHandler(io.Discard, false, slog.LevelWarn).Enabled(context.Background(), slog.LevelInfo) {
		t.Error("info enabled at level warn")
	}
}

// BenchmarkAccessLine is the cost of one access line, fast path and
// slog's, in text:
//
//	go test -run '^$' -bench AccessLine -benchmem ./internal/logline/
func BenchmarkAccessLine(b *testing.B) {
	for _, h := range []struct {
		name string
		h    slog.Handler
	}{{"line", NewHandler(io.Discard, false, slog.LevelInfo)}, {"slog", slog.NewTextHandler(io.Discard, nil)}} {
		b.Run(h.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r := slog.NewRecord(time.Now(), slog.LevelInfo, "access", 0)
				r.AddAttrs(slog.String("id", "a1b2c3d4e5f6-1f"), slog.String("principal", "token:bench@https://issuer.example"),
					slog.String("method", "HEAD"), slog.String("path", "/bench/tree/d0065/f0009965"), slog.Int("status", 200),
					slog.Int("bytes", 0), slog.Duration("duration", 20939*time.Nanosecond))
				h.h.Handle(context.Background(), r)
			}
		})
	}
}
