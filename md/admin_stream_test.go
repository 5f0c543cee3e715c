package md

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"shoal"
	"shoal/sign"
	"shoal/wire"
)

func streamEnv(t *testing.T, files, size int) *env {
	t.Helper()
	e := newEnv(t, DataProxy, func(o *Options) { o.ProgressInterval = 20 * time.Millisecond })
	for i := range files {
		e.put(fmt.Sprintf("/f%02d", i), bytes.Repeat([]byte{byte(i)}, size)).want(t, "PUT", 201, "")
	}
	return e
}

// TestAdminStreamsProgress: a streamed scrub sends progress lines that
// move (files done, bytes read) before its result, and the result is the
// same report a plain call gets.
func TestAdminStreamsProgress(t *testing.T) {
	const files, size = 12, 100_000
	e := streamEnv(t, files, size)
	var lines []wire.Progress
	var rep wire.ScrubReport
	// 1.2 MB at 0.5 MB/s: a couple of seconds, many progress lines.
	err := wire.NewClient(e.url, e.keys).Stream(context.Background(), wire.PathAdminScrub, wire.ScrubRequest{RateMBps: 0.5},
		func(raw json.RawMessage) {
			var p wire.Progress
			if err := json.Unmarshal(raw, &p); err != nil {
				t.Errorf("progress line %s: %v", raw, err)
			}
			lines = append(lines, p)
		}, &rep)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Files != files || rep.Replicas != files || rep.BytesRead != files*size || rep.Bad != 0 {
		t.Errorf("report %+v: want %d files, %d bytes, no problems", rep, files, files*size)
	}
	midway := false
	for i, p := range lines {
		if p.Op != "scrub" {
			t.Errorf("line %d: op %q", i, p.Op)
		}
		if p.Phase == "reading and verifying" && p.Done > 0 && p.Done < files && p.Total == files && p.Bytes > 0 && p.Bytes < files*size {
			midway = true
		}
		if i > 0 && (p.Bytes < lines[i-1].Bytes || p.Elapsed < lines[i-1].Elapsed) {
			t.Errorf("line %d goes back: %+v after %+v", i, p, lines[i-1])
		}
	}
	if !midway {
		t.Errorf("no progress line caught the scrub midway (%d lines): %+v", len(lines), lines)
	}
	if last := lines[len(lines)-1]; last.Done != files || last.Bytes != files*size {
		t.Errorf("last progress line %+v: want all %d files and %d bytes", last, files, files*size)
	}
}

// TestAdminStreamHangUpStops: hanging up on a streamed operation stops it
// in md (the scrub here would otherwise read for about 20 s).
func TestAdminStreamHangUpStops(t *testing.T) {
	e := streamEnv(t, 10, 100_000)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		errc <- wire.NewClient(e.url, e.keys).Stream(ctx, wire.PathAdminScrub, wire.ScrubRequest{RateMBps: 0.05}, func(raw json.RawMessage) {
			var p wire.Progress
			json.Unmarshal(raw, &p)
			if p.Bytes > 0 {
				cancel()
			}
		}, nil)
	}()
	select {
	case err := <-errc:
		if err == nil {
			t.Fatal("the scrub finished: it was meant to be slow enough to be interrupted")
		}
	case <-time.After(15 * time.Second):
		t.Fatal("no progress with bytes read within 15 s")
	}
	deadline := time.Now().Add(5 * time.Second)
	for e.md.ops.Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the scrub still runs in md 5 s after the client hung up")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestAdminStreamErrors: an operation that fails after streaming began
// reports its error kind in the error line; fsck streamed gives the same
// report as a plain call.
func TestAdminStreamErrors(t *testing.T) {
	e := streamEnv(t, 2, 10_000)
	cl := wire.NewClient(e.url, e.keys)
	err := cl.Stream(context.Background(), wire.PathAdminDrain, wire.DrainRequest{Server: "nope"}, nil, nil)
	if !shoal.IsKind(err, shoal.KindNotFound) {
		t.Errorf("drain of an unknown server: %v, want KindNotFound", err)
	}
	var streamed, plain wire.FsckReport
	if err := cl.Stream(context.Background(), wire.PathAdminFsck, struct{}{}, nil, &streamed); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Call(wire.PathAdminFsck, struct{}{}, &plain); err != nil {
		t.Fatal(err)
	}
	if !streamed.OK || streamed.Replicas != 2 || streamed.Objects != 2 || plain.Replicas != streamed.Replicas || plain.OK != streamed.OK {
		t.Errorf("streamed fsck %+v, plain %+v", streamed, plain)
	}
	// A bad signature is refused before any streaming: a plain 403.
	err = wire.NewClient(e.url, sign.Random()).Stream(context.Background(), wire.PathAdminFsck, struct{}{}, nil, nil)
	if !shoal.IsKind(err, shoal.KindPermission) {
		t.Errorf("fsck signed with another key: %v, want KindPermission", err)
	}
}

// TestAdminStreamShutdown: md shutting down ends a running operation at
// once with a clear 503-kind error line, rather than waiting for it.
func TestAdminStreamShutdown(t *testing.T) {
	e := streamEnv(t, 10, 100_000)
	errc := make(chan error, 1)
	started := make(chan struct{})
	var once sync.Once
	go func() {
		errc <- wire.NewClient(e.url, e.keys).Stream(context.Background(), wire.PathAdminScrub, wire.ScrubRequest{RateMBps: 0.05},
			func(json.RawMessage) { once.Do(func() { close(started) }) }, nil)
	}()
	select {
	case <-started:
	case <-time.After(15 * time.Second):
		t.Fatal("no progress within 15 s")
	}
	closed := make(chan error, 1)
	go func() { closed <- e.md.Close() }()
	select {
	case err := <-errc:
		if !shoal.IsKind(err, shoal.KindUnavailable) || !strings.Contains(err.Error(), "shutting down") {
			t.Errorf("scrub during shutdown: %v, want KindUnavailable saying md is shutting down", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the scrub (about 20 s) still runs 10 s after md began shutting down")
	}
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("md's Close did not return within 10 s of the operation's end")
	}
}
