package main

import (
	"strings"
	"sync"
	"testing"
	"time"

	"shoal"
)

func TestPrintStatusSumsPoolsAndFlagsTheUnhealthy(t *testing.T) {
	now := time.Now()
	st := status{MD: "http://md:8080", MDHealth: "ok", Servers: []serverStatus{
		{Server: shoal.Server{ID: "a", Pool: "default", State: shoal.ServerActive, Free: 1 << 30, Total: 4 << 30, LastSeen: now}, Live: true, Health: "ok"},
		{Server: shoal.Server{ID: "b", Pool: "default", State: shoal.ServerReadOnly, Free: 1 << 30, Total: 4 << 30, LastSeen: now}, Live: true, Health: "ok"},
		{Server: shoal.Server{ID: "c", Pool: "ec", State: shoal.ServerActive, Free: 5, Total: 10, LastSeen: now.Add(-time.Hour)}, Live: false, Health: "unreachable: dial tcp"},
		{Server: shoal.Server{ID: "d", Pool: "ec", State: shoal.ServerRetired}, Health: "-"},
	}}
	var b strings.Builder
	if err := printStatus(&b, &st, now); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"default  2        2     1         0          2.0 GiB      8.0 GiB",
		"ec       1        0     0         1          0 B          0 B",
		"status  UNHEALTHY",
		"unreachable: dial tcp",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if st.healthy() {
		t.Error("a dead active server must make the status unhealthy")
	}
	st.Servers = st.Servers[:2]
	if !st.healthy() {
		t.Error("live, ok servers and md ok: want healthy")
	}
	st.MDHealth = "503 catalog: database is locked"
	if st.healthy() {
		t.Error("md unhealthy: want unhealthy")
	}
}

type syncBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuilder) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func TestProgressEndsItsLine(t *testing.T) {
	var w syncBuilder
	done := progressTo(&w, "fsck", time.Millisecond)
	time.Sleep(5 * time.Millisecond)
	done()
	out := w.b.String()
	if !strings.HasPrefix(out, "\rfsck … ") || !strings.Contains(out, "\rfsck done in ") || !strings.HasSuffix(out, "\n") {
		t.Errorf("progress wrote %q", out)
	}
}
