package main

import (
	"strings"
	"testing"
	"time"

	"shoal"
	"shoal/wire"
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

func TestFormatProgress(t *testing.T) {
	got := formatProgress(wire.Progress{Op: "scrub", Phase: "reading and verifying", Done: 25, Total: 100, Unit: "files",
		Bytes: 50e6, Problems: 2, Elapsed: 10_000, PhaseElapsed: 5_000})
	want := "scrub: reading and verifying 25/100 files (25%) · 2 problems · read 47.7 MiB (5.0 MB/s) · 10s, about 15s left"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	got = formatProgress(wire.Progress{Op: "fsck", Phase: "server 1/2 d1: reading the catalog", Done: 7, Unit: "replicas"})
	if want := "fsck: server 1/2 d1: reading the catalog 7 replicas · 0 problems · 0s"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// TestProgressPrinter: in a log, a line when a phase starts and where it
// ended, otherwise no more often than the interval, and where the
// operation stopped; on a terminal, one line rewritten and ended.
func TestProgressPrinter(t *testing.T) {
	var log strings.Builder
	p := &progressPrinter{w: &log, every: time.Hour}
	p.show(wire.Progress{Op: "repair", Phase: "listing files"})
	p.show(wire.Progress{Op: "repair", Phase: "listing files", Done: 5}) // same phase, too soon
	p.show(wire.Progress{Op: "repair", Phase: "checking", Total: 9, Done: 1})
	p.show(wire.Progress{Op: "repair", Phase: "checking", Total: 9, Done: 8}) // held, then replaced
	p.show(wire.Progress{Op: "repair", Phase: "checking", Total: 9, Done: 9}) // held: end shows it
	p.end()
	if lines := strings.Split(strings.TrimSuffix(log.String(), "\n"), "\n"); len(lines) != 4 ||
		!strings.HasPrefix(lines[0], "repair: listing files · ") || !strings.HasPrefix(lines[1], "repair: listing files 5 · ") ||
		!strings.Contains(lines[2], "checking 1/9 (11%)") || !strings.Contains(lines[3], "checking 9/9 (100%)") {
		t.Errorf("log lines:\n%s", log.String())
	}

	var tty strings.Builder
	p = &progressPrinter{w: &tty, tty: true}
	p.show(wire.Progress{Op: "drain", Phase: "pass 1: moving files off d1", Total: 10, Done: 3, Unit: "files"})
	p.show(wire.Progress{Op: "drain", Phase: "done"})
	p.end()
	out := tty.String()
	if strings.Count(out, "\r") != 2 || !strings.HasSuffix(out, "\n") || strings.Count(out, "\n") != 1 {
		t.Errorf("terminal output %q: want two rewrites of one line, then a newline", out)
	}
	if !strings.Contains(out, "drain: done · 0 problems · 0s     ") {
		t.Errorf("a shorter line does not blank the rest of the longer one: %q", out)
	}
}
