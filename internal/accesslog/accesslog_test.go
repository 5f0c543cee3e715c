package accesslog

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"shoal/internal/logline"
)

// TestRequestIDs: a client's id is kept sanitized and bounded; without a
// usable one each request gets a new id (the end-to-end logs are md's
// TestRequestID and TestAuthLogsNoSecrets).
func TestRequestIDs(t *testing.T) {
	if got := string(AppendRequestID(nil, []byte(" a b\n"))); got != "a_b_" {
		t.Errorf("sanitized id %q", got)
	}
	if got := AppendRequestID(nil, []byte(strings.Repeat("x", 200))); len(got) > 64 {
		t.Errorf("id of %d bytes kept", len(got))
	}
	a, b := string(AppendRequestID(nil, nil)), string(AppendRequestID(nil, []byte("  ")))
	if a == "" || b == "" || a == b {
		t.Errorf("made ids %q and %q: want two distinct", a, b)
	}
	if m := methodName([]byte("PROPFIND")); m != "PROPFIND" {
		t.Errorf("method %q", m)
	}
	if m := methodName([]byte(strings.Repeat("Z", 40) + "\r\n")); len(m) != 16 {
		t.Errorf("unknown method logged as %q", m)
	}
}

// BenchmarkAudit: the audit line of a create, as md writes one for every
// mutation, through the handler shoal logs with.
func BenchmarkAudit(b *testing.B) {
	log := slog.New(logline.NewHandler(io.Discard, false, slog.LevelInfo))
	var rc fasthttp.RequestCtx
	rc.Request.Header.SetMethod("PUT")
	rc.Response.SetStatusCode(fasthttp.StatusCreated)
	l := &Line{ID: []byte("5d1c0a9e33f1-1f"), Principal: "alice", Path: "/data/run7/file-000123", Start: time.Now()}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		Audit(ctx, log, &rc, l)
	}
}
