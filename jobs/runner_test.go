package jobs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"shoal"
	"shoal/internal/testsystem"
	"shoal/jobs"
	"shoal/storetest"
	"shoal/wire"
)

// A long job without big data: scrubFiles files of scrubSize bytes read at
// scrubRate MB/s, about half a second a file.
const (
	scrubFiles = 8
	scrubSize  = 50_000
	scrubRate  = 0.1
)

// scrubSystem is a cluster with one data server holding the files of a
// slow scrub, and no runner: each test starts its own.
func scrubSystem(t *testing.T) *testsystem.Cluster {
	t.Helper()
	c := testsystem.New(t)
	c.StopRunners()
	c.AddDisks("default", 1)
	for i := range scrubFiles {
		if st, body := c.Do("PUT", c.PURL, fmt.Sprintf("/f%02d", i), nil, storetest.Data(uint64(i), scrubSize)); st != 201 {
			t.Fatalf("PUT: %d %s", st, body)
		}
	}
	return c
}

// startScrub creates the slow scrub through md.
func startScrub(t *testing.T, c *testsystem.Cluster) shoal.Job {
	t.Helper()
	var j shoal.Job
	if _, err := c.WC.Call(wire.PathAdminJobCreate, wire.JobRequest{Kind: wire.JobScrub,
		Args: json.RawMessage(fmt.Sprintf(`{"rate_mb_per_s":%g}`, scrubRate))}, &j); err != nil {
		t.Fatal(err)
	}
	return j
}

// waitFor polls job id until cond holds, for at most limit.
func waitFor(t *testing.T, c *testsystem.Cluster, id int64, limit time.Duration, what string, cond func(*shoal.Job, wire.Progress) bool) *shoal.Job {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		j, err := c.DB.Job(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		var p wire.Progress
		json.Unmarshal(j.Progress, &p)
		if cond(j, p) {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %d: not %s within %v: %+v, progress %s", id, what, limit, j, j.Progress)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// counting counts the objects a runner's operations open.
type counting struct {
	shoal.BlobStore
	opened *atomic.Int64
}

func (s counting) Open(ctx context.Context, id string) (shoal.Object, error) {
	s.opened.Add(1)
	return s.BlobStore.Open(ctx, id)
}

// TestJobTakeover: the runner of a scrub dies mid-way (no finish, no
// hand-back); another runner takes the job over once its lease lapses,
// not before, resumes after the last file checkpointed (it opens fewer
// objects than there are files) and finishes it with a report of every
// file; a follower streams progress through md all along and gets the
// result.
func TestJobTakeover(t *testing.T) {
	c := scrubSystem(t)
	a := c.NewRunner("A")
	defer a.Close()
	j := startScrub(t, c)

	type followed struct {
		lines int
		rep   wire.ScrubReport
		err   error
	}
	follower := make(chan followed, 1)
	go func() {
		var f followed
		f.err = c.WC.Stream(context.Background(), wire.PathAdminJobFollow, wire.JobID{ID: j.ID},
			func(json.RawMessage) { f.lines++ }, &f.rep)
		follower <- f
	}()

	waitFor(t, c, j.ID, 20*time.Second, "three files in", func(j *shoal.Job, p wire.Progress) bool {
		return p.Phase == "reading and verifying" && p.Done >= 3
	})
	a.Crash()
	crashed, err := c.DB.Job(context.Background(), j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if crashed.State != shoal.JobRunning || crashed.Owner != "A" {
		t.Fatalf("after the crash: %+v", crashed)
	}

	var opened atomic.Int64
	env := c.Env()
	store := env.Store
	env.Store = func(sv shoal.Server) shoal.BlobStore { return counting{store(sv), &opened} }
	b, err := jobs.NewRunner(jobs.RunnerOptions{ID: "B", Jobs: c.Cat, Env: env, Lease: testsystem.Lease, Interval: testsystem.JobInterval})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	b.Start()
	taken := waitFor(t, c, j.ID, testsystem.Lease+5*time.Second, "taken over", func(j *shoal.Job, _ wire.Progress) bool { return j.Owner == "B" })
	if taken.Heartbeat.Before(crashed.LeaseUntil) {
		t.Errorf("taken over at %v, before A's lease ended at %v", taken.Heartbeat, crashed.LeaseUntil)
	}
	if late := taken.Heartbeat.Sub(crashed.LeaseUntil); late > time.Second {
		t.Errorf("taken over %v after A's lease ended", late)
	}
	done := waitFor(t, c, j.ID, 20*time.Second, "finished", func(j *shoal.Job, _ wire.Progress) bool { return j.State.Finished() })
	var rep wire.ScrubReport
	if err := json.Unmarshal(done.Result, &rep); err != nil || done.State != shoal.JobDone || done.Runs != 2 {
		t.Fatalf("job after the takeover: %+v (%v)", done, err)
	}
	if rep.Files != scrubFiles || rep.Replicas != scrubFiles || rep.BytesRead != scrubFiles*scrubSize || rep.Bad != 0 {
		t.Errorf("report %+v: want %d files, %d bytes, no problems", rep, scrubFiles, scrubFiles*scrubSize)
	}
	if n := opened.Load(); n == 0 || n >= scrubFiles {
		t.Errorf("B opened %d objects: a resumed scrub reads only the files after A's last checkpoint (%d files in all)", n, scrubFiles)
	}
	select {
	case f := <-follower:
		if f.err != nil || f.rep.Files != scrubFiles || f.lines < 10 {
			t.Errorf("follower: %d progress lines, report %+v, %v", f.lines, f.rep, f.err)
		}
	case <-time.After(10 * time.Second):
		t.Error("the follower did not get the result within 10 s of the job's end")
	}
}

// TestJobHandBack: a runner closed mid-job (md shutting down) hands the
// job back at once, so another runner resumes it without waiting for the
// lease.
func TestJobHandBack(t *testing.T) {
	c := scrubSystem(t)
	a := c.NewRunner("A")
	j := startScrub(t, c)
	waitFor(t, c, j.ID, 20*time.Second, "two files in", func(j *shoal.Job, p wire.Progress) bool {
		return p.Phase == "reading and verifying" && p.Done >= 2
	})
	a.Close()
	closed := time.Now()
	back, err := c.DB.Job(context.Background(), j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if back.State != shoal.JobRunning || back.LeaseUntil.After(closed) {
		t.Fatalf("after Close: %+v, want running with its lease ended", back)
	}
	b := c.NewRunner("B")
	defer b.Close()
	taken := waitFor(t, c, j.ID, testsystem.Lease, "taken over", func(j *shoal.Job, _ wire.Progress) bool { return j.Owner == "B" })
	if wait := taken.Heartbeat.Sub(closed); wait > testsystem.Lease/2 {
		t.Errorf("taken over %v after the hand-back", wait)
	}
	done := waitFor(t, c, j.ID, 20*time.Second, "finished", func(j *shoal.Job, _ wire.Progress) bool { return j.State.Finished() })
	var rep wire.ScrubReport
	if err := json.Unmarshal(done.Result, &rep); err != nil || done.State != shoal.JobDone || done.Runs != 2 || rep.Files != scrubFiles {
		t.Errorf("job after the hand-back: %+v, report %+v (%v)", done, rep, err)
	}
}

// TestJobCancel: a running job cancelled through md stops within a few
// heartbeats with the report of what it did, and its runner goes on to
// the next job.
func TestJobCancel(t *testing.T) {
	c := scrubSystem(t)
	a := c.NewRunner("A")
	defer a.Close()
	j := startScrub(t, c)
	waitFor(t, c, j.ID, 20*time.Second, "a file in", func(j *shoal.Job, p wire.Progress) bool {
		return p.Phase == "reading and verifying" && p.Done >= 1
	})
	if _, err := c.WC.Call(wire.PathAdminJobCancel, wire.JobID{ID: j.ID}, nil); err != nil {
		t.Fatal(err)
	}
	cancelled := time.Now()
	done := waitFor(t, c, j.ID, 5*time.Second, "stopped", func(j *shoal.Job, _ wire.Progress) bool { return j.Result != nil })
	if took := time.Since(cancelled); took > time.Second {
		t.Errorf("the runner took %v to stop a cancelled job", took)
	}
	var rep wire.ScrubReport
	if err := json.Unmarshal(done.Result, &rep); err != nil || done.State != shoal.JobCancelled || rep.Files >= scrubFiles {
		t.Errorf("cancelled job: %+v, report %+v (%v)", done, rep, err)
	}
	var next shoal.Job
	if _, err := c.WC.Call(wire.PathAdminJobCreate, wire.JobRequest{Kind: wire.JobFsck}, &next); err != nil {
		t.Fatal(err)
	}
	f := waitFor(t, c, next.ID, 10*time.Second, "finished", func(j *shoal.Job, _ wire.Progress) bool { return j.State.Finished() })
	if f.State != shoal.JobDone || f.Owner != "A" {
		t.Errorf("the job after the cancelled one: %+v", f)
	}
}

// panicking is a data server's store whose Open panics: a bug in a job.
type panicking struct{ shoal.BlobStore }

func (panicking) Open(context.Context, string) (shoal.Object, error) { panic("a bug in a job") }

// TestJobPanicFails: a job that panics (here its store's Open does) ends
// failed, with the reason "internal error", and its runner goes on: the
// next job finishes. Before, the panic ended the whole process — md and,
// in shoal all, its data server (an erasure-coded scrub did, ec.Verify
// dividing by zero when no shard could be opened).
func TestJobPanicFails(t *testing.T) {
	c := scrubSystem(t)
	env := c.Env()
	store := env.Store
	env.Store = func(sv shoal.Server) shoal.BlobStore { return panicking{store(sv)} }
	r, err := jobs.NewRunner(jobs.RunnerOptions{ID: "P", Jobs: c.Cat, Env: env, Lease: testsystem.Lease, Interval: testsystem.JobInterval})
	if err != nil {
		t.Fatal(err)
	}
	r.Start()
	defer r.Close()
	j := startScrub(t, c)
	done := waitFor(t, c, j.ID, 10*time.Second, "ended", func(j *shoal.Job, _ wire.Progress) bool { return j.State.Finished() })
	if done.State != shoal.JobFailed || !strings.Contains(done.Error, "internal error in the scrub job: a bug in a job") || done.Owner != "P" {
		t.Errorf("the panicking job: %+v", done)
	}
	var next shoal.Job
	if _, err := c.WC.Call(wire.PathAdminJobCreate, wire.JobRequest{Kind: wire.JobFsck}, &next); err != nil {
		t.Fatal(err)
	}
	f := waitFor(t, c, next.ID, 10*time.Second, "finished", func(j *shoal.Job, _ wire.Progress) bool { return j.State.Finished() })
	if f.State != shoal.JobDone || f.Owner != "P" {
		t.Errorf("the job after the panicking one: %+v", f)
	}
}
