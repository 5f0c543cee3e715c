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
	"shoal/diskserver/remote"
	"shoal/jobs"
	"shoal/sign"
	"shoal/wire"
)

// streamEnv is newEnv with files to read and, unless noRunner, a job
// runner beside md (as cmd/shoal runs one).
func streamEnv(t *testing.T, files, size int, noRunner bool) *env {
	t.Helper()
	e := newEnv(t, DataProxy, func(o *Options) { o.ProgressInterval = 20 * time.Millisecond })
	for i := range files {
		e.put(fmt.Sprintf("/f%02d", i), bytes.Repeat([]byte{byte(i)}, size)).want(t, "PUT", 201, "")
	}
	if !noRunner {
		r, err := jobs.NewRunner(jobs.RunnerOptions{ID: "r1", Jobs: e.db, Lease: 2 * time.Second, Interval: 20 * time.Millisecond,
			Env: jobs.Env{Catalog: e.db, Store: func(sv shoal.Server) shoal.BlobStore { return remote.New(sv.URL, e.keys) }}})
		if err != nil {
			t.Fatal(err)
		}
		r.Start()
		t.Cleanup(func() { r.Close() })
	}
	return e
}

// TestAdminStreamsProgress: a streamed scrub (a job, followed) sends
// progress lines that move (files done, bytes read) before its result.
func TestAdminStreamsProgress(t *testing.T) {
	const files, size = 12, 100_000
	e := streamEnv(t, files, size, false)
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
	midway, listed := false, false
	for i, p := range lines {
		if p.Op != "scrub" {
			t.Errorf("line %d: op %q", i, p.Op)
		}
		listed = listed || p.Phase == "listing files"
		if p.Phase == "reading and verifying" && p.Done > 0 && p.Done < files && p.Total == files && p.Bytes > 0 && p.Bytes < files*size {
			midway = true
		}
		if i > 0 && (p.Bytes < lines[i-1].Bytes || p.Elapsed < lines[i-1].Elapsed) {
			t.Errorf("line %d goes back: %+v after %+v", i, p, lines[i-1])
		}
	}
	if !midway || !listed {
		t.Errorf("no progress line caught the scrub midway (%v) or its listing phase (%v) (%d lines): %+v", midway, listed, len(lines), lines)
	}
	if last := lines[len(lines)-1]; last.Done != files || last.Bytes != files*size {
		t.Errorf("last progress line %+v: want all %d files and %d bytes", last, files, files*size)
	}
}

// TestAdminFollowerHangsUp: hanging up on a followed job leaves the job
// running; cancelling it stops it promptly, and following it then says it
// was cancelled.
func TestAdminFollowerHangsUp(t *testing.T) {
	e := streamEnv(t, 10, 100_000, false)
	cl := wire.NewClient(e.url, e.keys)
	var j shoal.Job
	if _, err := cl.Call(wire.PathAdminJobCreate, wire.JobRequest{Kind: wire.JobScrub, Args: json.RawMessage(`{"rate_mb_per_s":0.05}`)}, &j); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		errc <- cl.Stream(ctx, wire.PathAdminJobFollow, wire.JobID{ID: j.ID}, func(raw json.RawMessage) {
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
	// The job goes on: its recorded progress still moves.
	bytesOf := func() (int64, shoal.JobState) {
		var got shoal.Job
		if _, err := cl.Call(wire.PathAdminJob, wire.JobID{ID: j.ID}, &got); err != nil {
			t.Fatal(err)
		}
		var p wire.Progress
		json.Unmarshal(got.Progress, &p)
		return p.Bytes, got.State
	}
	before, _ := bytesOf()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, st := bytesOf()
		if st != shoal.JobRunning {
			t.Fatalf("job %s after its follower hung up", st)
		}
		if b > before {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the job made no progress in 10 s after its follower hung up")
		}
		time.Sleep(50 * time.Millisecond)
	}
	var cancelled shoal.Job
	if _, err := cl.Call(wire.PathAdminJobCancel, wire.JobID{ID: j.ID}, &cancelled); err != nil || cancelled.State != shoal.JobCancelled {
		t.Fatalf("cancel: %+v, %v", cancelled, err)
	}
	// The runner stops it within a few heartbeats: the result it records
	// says how far it got, and no byte is read after.
	deadline = time.Now().Add(5 * time.Second)
	var got shoal.Job
	for {
		if _, err := cl.Call(wire.PathAdminJob, wire.JobID{ID: j.ID}, &got); err != nil {
			t.Fatal(err)
		}
		if got.Result != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the cancelled job's runner did not stop within 5 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	var rep wire.ScrubReport
	if err := json.Unmarshal(got.Result, &rep); err != nil || got.State != shoal.JobCancelled || rep.Files >= 10 {
		t.Errorf("cancelled job: %s, result %s (%v)", got.State, got.Result, err)
	}
	b1, _ := bytesOf()
	time.Sleep(200 * time.Millisecond)
	if b2, _ := bytesOf(); b2 != b1 {
		t.Errorf("the cancelled job still reads: %d then %d bytes", b1, b2)
	}
	err := cl.Stream(context.Background(), wire.PathAdminJobFollow, wire.JobID{ID: j.ID}, nil, nil)
	if !shoal.IsKind(err, shoal.KindConflict) || !strings.Contains(err.Error(), "cancelled") {
		t.Errorf("following a cancelled job: %v, want KindConflict saying cancelled", err)
	}
}

// TestAdminStreamErrors: a job that fails after streaming began reports
// its error kind in the error line; fsck streamed gives the same report
// as a plain call; bad signatures are refused before anything starts.
func TestAdminStreamErrors(t *testing.T) {
	e := streamEnv(t, 2, 10_000, false)
	cl := wire.NewClient(e.url, e.keys)
	err := cl.Stream(context.Background(), wire.PathAdminDrain, wire.DrainRequest{Server: "nope"}, nil, nil)
	if !shoal.IsKind(err, shoal.KindNotFound) || !strings.Contains(err.Error(), `no server "nope"`) {
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
	e.do("POST", wire.PathAdminFsck, nil, []byte("{}")).want(t, "unsigned fsck", 403, "")
	var servers []shoal.Server
	if _, err := cl.Call(wire.PathAdminServers, struct{}{}, &servers); err != nil || len(servers) != 1 || servers[0].ID != "ds1" {
		t.Errorf("admin servers: %+v %v", servers, err)
	}
}

// TestAdminJobs: jobs created through md are listed newest first, shown
// and cancelled; bad kinds, arguments and ids are refused with their
// kind. No runner here: the jobs stay queued.
func TestAdminJobs(t *testing.T) {
	e := streamEnv(t, 0, 0, true)
	cl := wire.NewClient(e.url, e.keys)
	for _, bad := range []wire.JobRequest{{Kind: "rm"}, {Kind: wire.JobDrain}, {Kind: wire.JobScrub, Args: json.RawMessage(`{"rate_mb_per_s":-1}`)}} {
		if _, err := cl.Call(wire.PathAdminJobCreate, bad, nil); !shoal.IsKind(err, shoal.KindInvalid) {
			t.Errorf("create %+v: %v, want KindInvalid", bad, err)
		}
	}
	var a, b shoal.Job
	if _, err := cl.Call(wire.PathAdminJobCreate, wire.JobRequest{Kind: wire.JobRepair}, &a); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Call(wire.PathAdminJobCreate, wire.JobRequest{Kind: wire.JobDrain, Args: json.RawMessage(`{"server":"ds1"}`)}, &b); err != nil {
		t.Fatal(err)
	}
	var list []shoal.Job
	if _, err := cl.Call(wire.PathAdminJobs, wire.JobsRequest{}, &list); err != nil || len(list) != 2 || list[0].ID != b.ID || list[1].ID != a.ID {
		t.Fatalf("jobs: %+v, %v", list, err)
	}
	if list[0].State != shoal.JobQueued || list[0].Kind != wire.JobDrain || string(list[0].Args) != `{"server":"ds1"}` {
		t.Errorf("listed job: %+v", list[0])
	}
	var got shoal.Job
	if _, err := cl.Call(wire.PathAdminJob, wire.JobID{ID: 999}, &got); !shoal.IsKind(err, shoal.KindNotFound) {
		t.Errorf("show unknown job: %v", err)
	}
	if _, err := cl.Call(wire.PathAdminJobCancel, wire.JobID{ID: a.ID}, &got); err != nil || got.State != shoal.JobCancelled {
		t.Errorf("cancel: %+v, %v", got, err)
	}
	if _, err := cl.Call(wire.PathAdminJob, wire.JobID{ID: a.ID}, &got); err != nil || got.State != shoal.JobCancelled || got.Kind != wire.JobRepair {
		t.Errorf("show cancelled: %+v, %v", got, err)
	}
	if _, err := cl.Call(wire.PathAdminJobFollow, wire.JobID{ID: a.ID}, nil); !shoal.IsKind(err, shoal.KindConflict) {
		t.Errorf("plain follow of a cancelled job: %v, want KindConflict", err)
	}
}

// TestAdminStreamShutdown: md shutting down ends its followers at once
// with a clear 503-kind error line, rather than waiting for the job, which
// goes on in its runner.
func TestAdminStreamShutdown(t *testing.T) {
	e := streamEnv(t, 10, 100_000, false)
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
		if !shoal.IsKind(err, shoal.KindUnavailable) || !strings.Contains(err.Error(), "shutting down") || !strings.Contains(err.Error(), "goes on") {
			t.Errorf("scrub during shutdown: %v, want KindUnavailable saying md is shutting down and the job goes on", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the follower still follows 10 s after md began shutting down")
	}
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("md's Close did not return within 10 s")
	}
	js, err := e.db.Jobs(context.Background(), 1)
	if err != nil || len(js) != 1 || js[0].State != shoal.JobRunning {
		t.Errorf("the job after md's shutdown: %+v, %v; want it still running", js, err)
	}
}
