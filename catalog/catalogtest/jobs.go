package catalogtest

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"shoal"
)

const lease = 10 * time.Second

// testJobs: a job's life through create, claim, heartbeat, finish; what
// Job and Jobs show; takeover only once the lease has lapsed, after which
// the old owner's heartbeat and finish are refused; cancel of queued and
// running jobs.
func testJobs(t *testing.T, c shoal.Catalog) {
	wantKind(t, "CreateJob without kind", errOf(c.CreateJob(ctx(t), &shoal.Job{})), shoal.KindInvalid)
	wantKind(t, "CreateJob with bad args", errOf(c.CreateJob(ctx(t), &shoal.Job{Kind: "scrub", Args: json.RawMessage("{")})), shoal.KindInvalid)
	wantKind(t, "Job unknown", errOf(c.Job(ctx(t), 12345)), shoal.KindNotFound)
	wantKind(t, "ClaimJob on none", errOf(c.ClaimJob(ctx(t), "r1", t0, lease)), shoal.KindNotFound)

	a := got(c.CreateJob(ctx(t), &shoal.Job{Kind: "scrub", Args: json.RawMessage(`{"rate_mb_per_s":5}`)})).must(t)
	b := got(c.CreateJob(ctx(t), &shoal.Job{Kind: "fsck"})).must(t)
	if a.ID == 0 || b.ID <= a.ID || a.State != shoal.JobQueued || a.Kind != "scrub" || a.Runs != 0 || a.Created.IsZero() {
		t.Fatalf("created %+v then %+v", a, b)
	}
	if j := got(c.Job(ctx(t), a.ID)).must(t); string(j.Args) != `{"rate_mb_per_s":5}` || j.State != shoal.JobQueued || j.Owner != "" {
		t.Errorf("Job(a) = %+v", j)
	}

	// The oldest first; progress is the owner's; a heartbeat extends the lease.
	now := t0
	j := got(c.ClaimJob(ctx(t), "r1", now, lease)).must(t)
	if j.ID != a.ID || j.State != shoal.JobRunning || j.Owner != "r1" || j.Runs != 1 || !j.LeaseUntil.Equal(now.Add(lease)) {
		t.Fatalf("first claim = %+v, want job %d running for r1 until %v", j, a.ID, now.Add(lease))
	}
	now = now.Add(time.Second)
	ok(t, c.HeartbeatJob(ctx(t), a.ID, "r1", json.RawMessage(`{"cursor":"/m"}`), now, lease))
	wantKind(t, "heartbeat by another runner", c.HeartbeatJob(ctx(t), a.ID, "r2", nil, now, lease), shoal.KindConflict)
	wantKind(t, "heartbeat of an unknown job", c.HeartbeatJob(ctx(t), 12345, "r1", nil, now, lease), shoal.KindNotFound)
	if j := got(c.Job(ctx(t), a.ID)).must(t); string(j.Progress) != `{"cursor":"/m"}` || !j.Heartbeat.Equal(now) || !j.LeaseUntil.Equal(now.Add(lease)) {
		t.Errorf("after heartbeat: %+v", j)
	}

	// b is next; while a's lease holds nobody takes a.
	if j := got(c.ClaimJob(ctx(t), "r2", now, lease)).must(t); j.ID != b.ID {
		t.Fatalf("second claim = job %d, want %d", j.ID, b.ID)
	}
	wantKind(t, "claim while every lease holds", errOf(c.ClaimJob(ctx(t), "r3", now.Add(lease-time.Millisecond), lease)), shoal.KindNotFound)

	// a's lease lapses: r1's heartbeat is refused, r3 takes it over with
	// its progress, and r1 may not finish it.
	lapsed := now.Add(lease + time.Millisecond)
	wantKind(t, "heartbeat after the lease lapsed", c.HeartbeatJob(ctx(t), a.ID, "r1", nil, lapsed, lease), shoal.KindConflict)
	j = got(c.ClaimJob(ctx(t), "r3", lapsed, lease)).must(t)
	if j.ID != a.ID || j.Owner != "r3" || j.Runs != 2 || string(j.Progress) != `{"cursor":"/m"}` {
		t.Fatalf("takeover = %+v, want job %d for r3, second run, progress kept", j, a.ID)
	}
	wantKind(t, "old owner's heartbeat after takeover", c.HeartbeatJob(ctx(t), a.ID, "r1", nil, lapsed, lease), shoal.KindConflict)
	wantKind(t, "old owner's finish after takeover", c.FinishJob(ctx(t), &shoal.Job{ID: a.ID, Owner: "r1", State: shoal.JobDone}, lapsed), shoal.KindConflict)
	wantKind(t, "finish as running", c.FinishJob(ctx(t), &shoal.Job{ID: a.ID, Owner: "r3", State: shoal.JobRunning}, lapsed), shoal.KindInvalid)

	ok(t, c.FinishJob(ctx(t), &shoal.Job{ID: a.ID, Owner: "r3", State: shoal.JobDone, Progress: json.RawMessage(`{"done":3}`),
		Result: json.RawMessage(`{"files":3}`)}, lapsed))
	if j := got(c.Job(ctx(t), a.ID)).must(t); j.State != shoal.JobDone || string(j.Result) != `{"files":3}` || string(j.Progress) != `{"done":3}` {
		t.Errorf("finished job = %+v", j)
	}
	wantKind(t, "finish twice", c.FinishJob(ctx(t), &shoal.Job{ID: a.ID, Owner: "r3", State: shoal.JobDone}, lapsed), shoal.KindConflict)
	wantKind(t, "cancel a done job", errOf(c.CancelJob(ctx(t), a.ID, lapsed)), shoal.KindConflict)
	wantKind(t, "cancel an unknown job", errOf(c.CancelJob(ctx(t), 12345, lapsed)), shoal.KindNotFound)

	// b fails with its error kind.
	ok(t, c.FinishJob(ctx(t), &shoal.Job{ID: b.ID, Owner: "r2", State: shoal.JobFailed, Error: "no server x", ErrorKind: shoal.KindNotFound}, lapsed))
	if j := got(c.Job(ctx(t), b.ID)).must(t); j.State != shoal.JobFailed || j.Error != "no server x" || j.ErrorKind != shoal.KindNotFound {
		t.Errorf("failed job = %+v", j)
	}

	// Cancelled while queued: nobody claims it. Cancelled while running:
	// the owner's heartbeat is refused, its finish keeps the state and
	// records the partial result.
	q := got(c.CreateJob(ctx(t), &shoal.Job{Kind: "repair"})).must(t)
	if j := got(c.CancelJob(ctx(t), q.ID, lapsed)).must(t); j.State != shoal.JobCancelled {
		t.Errorf("cancelled queued job = %+v", j)
	}
	got(c.CancelJob(ctx(t), q.ID, lapsed)).must(t) // again: no change, no error
	r := got(c.CreateJob(ctx(t), &shoal.Job{Kind: "drain", Args: json.RawMessage(`{"server":"d1"}`)})).must(t)
	if j := got(c.ClaimJob(ctx(t), "r1", lapsed, lease)).must(t); j.ID != r.ID {
		t.Fatalf("claim after a cancel = job %d, want %d", j.ID, r.ID)
	}
	got(c.CancelJob(ctx(t), r.ID, lapsed)).must(t)
	wantKind(t, "heartbeat of a cancelled job", c.HeartbeatJob(ctx(t), r.ID, "r1", nil, lapsed, lease), shoal.KindConflict)
	ok(t, c.FinishJob(ctx(t), &shoal.Job{ID: r.ID, Owner: "r1", State: shoal.JobFailed, Result: json.RawMessage(`{"moved":1}`)}, lapsed))
	if j := got(c.Job(ctx(t), r.ID)).must(t); j.State != shoal.JobCancelled || string(j.Result) != `{"moved":1}` {
		t.Errorf("cancelled running job after its finish = %+v", j)
	}
	wantKind(t, "claim with only finished jobs", errOf(c.ClaimJob(ctx(t), "r4", lapsed.Add(time.Hour), lease)), shoal.KindNotFound)

	// Jobs: newest first, limited, no results.
	list := got(c.Jobs(ctx(t), 3)).must(t)
	if len(list) != 3 || list[0].ID != r.ID || list[1].ID != q.ID || list[2].ID != b.ID {
		t.Fatalf("Jobs(3) = %+v", list)
	}
	if list[0].Result != nil || list[0].State != shoal.JobCancelled || list[0].Kind != "drain" || string(list[0].Args) != `{"server":"d1"}` {
		t.Errorf("Jobs[0] = %+v", list[0])
	}
	if all := got(c.Jobs(ctx(t), 0)).must(t); len(all) != 4 {
		t.Errorf("Jobs(0) lists %d jobs, want all 4", len(all))
	}

	// ForgetJobs: the jobs that ended before the cut go (a done, b failed,
	// q cancelled while queued); r, cancelled while its lease ran to
	// lapsed+lease, stays until then; queued and running jobs stay.
	queued := got(c.CreateJob(ctx(t), &shoal.Job{Kind: "fsck"})).must(t)
	running := got(c.CreateJob(ctx(t), &shoal.Job{Kind: "fsck"})).must(t)
	if j := got(c.ClaimJob(ctx(t), "r5", lapsed, lease)).must(t); j.ID != queued.ID {
		t.Fatalf("claim = job %d, want %d", j.ID, queued.ID)
	}
	queued, running = running, queued // the oldest was claimed
	forget := func(cut time.Time, want int64, gone, kept []int64) {
		t.Helper()
		if n := got(c.ForgetJobs(ctx(t), cut)).must(t); n != want {
			t.Errorf("ForgetJobs(%v) = %d, want %d", cut.Sub(lapsed), n, want)
		}
		for _, id := range gone {
			wantKind(t, fmt.Sprintf("job %d after ForgetJobs", id), errOf(c.Job(ctx(t), id)), shoal.KindNotFound)
		}
		for _, id := range kept {
			got(c.Job(ctx(t), id)).must(t)
		}
	}
	forget(lapsed, 0, nil, []int64{a.ID, b.ID, q.ID, r.ID})
	forget(lapsed.Add(time.Second), 3, []int64{a.ID, b.ID, q.ID}, []int64{r.ID, queued.ID, running.ID})
	forget(lapsed.Add(lease+time.Second), 1, []int64{r.ID}, []int64{queued.ID, running.ID})
	forget(time.Now().Add(24*time.Hour), 0, nil, []int64{queued.ID, running.ID})
}

// testConcurrentClaim: several runners claiming at once take each job
// exactly once, and each claim reports the job it took. Many rounds: a
// claim that loses the race makes its batch run again (group commit),
// which happens only now and then, and a claim's state kept from the run
// that lost once made a runner claim a second job and lose the first.
func testConcurrentClaim(t *testing.T, c shoal.Catalog) {
	const rounds, jobs, runners = 80, 6, 4
	for round := range rounds {
		if !claimRound(t, c, round, jobs, runners) {
			return
		}
	}
}

// claimRound runs one round of testConcurrentClaim; false: it failed.
func claimRound(t *testing.T, c shoal.Catalog, round, jobs, runners int) bool {
	t.Helper()
	for range jobs {
		got(c.CreateJob(ctx(t), &shoal.Job{Kind: "scrub"})).must(t)
	}
	var mu sync.Mutex
	claimed := map[int64][]string{}
	var wg sync.WaitGroup
	for r := range runners {
		owner := fmt.Sprintf("round%d-r%d", round, r)
		wg.Go(func() {
			for range jobs + 1 { // bounded: at most every job, then none
				j, err := c.ClaimJob(ctx(t), owner, t0, lease)
				if shoal.IsKind(err, shoal.KindNotFound) {
					return
				}
				if err != nil {
					t.Errorf("%s: ClaimJob: %v", owner, err)
					return
				}
				mu.Lock()
				claimed[j.ID] = append(claimed[j.ID], owner)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	ok := true
	if len(claimed) != jobs {
		t.Errorf("round %d: %d jobs claimed, want %d: %v", round, len(claimed), jobs, claimed)
		ok = false
	}
	for id, owners := range claimed {
		if len(owners) != 1 {
			t.Errorf("round %d: job %d claimed by %v", round, id, owners)
			ok = false
		}
		if j := got(c.Job(ctx(t), id)).must(t); j.Owner != owners[0] || j.Runs != 1 {
			t.Errorf("round %d: job %d = %+v, claimed by %v", round, id, j, owners)
			ok = false
		}
	}
	return ok
}

func errOf[T any](_ T, err error) error { return err }
