package jobs_test

import (
	"context"
	"testing"
	"time"

	"shoal"
	"shoal/internal/testsystem"
	"shoal/jobs"
)

// TestRunnerForgetsOldJobs: a runner deletes the jobs that ended more
// than Keep ago, and only those; with Keep zero it deletes none.
func TestRunnerForgetsOldJobs(t *testing.T) {
	c := testsystem.New(t)
	c.StopRunners()
	ctx := context.Background()
	ended := func(at time.Time) int64 { // a job claimed and done at at
		t.Helper()
		j, err := c.Cat.CreateJob(ctx, &shoal.Job{Kind: "fsck"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Cat.ClaimJob(ctx, "by-hand", at, time.Second); err != nil {
			t.Fatal(err)
		}
		if err := c.Cat.FinishJob(ctx, &shoal.Job{ID: j.ID, Owner: "by-hand", State: shoal.JobDone}, at); err != nil {
			t.Fatal(err)
		}
		return j.ID
	}
	old, recent := ended(time.Now().Add(-2*time.Hour)), ended(time.Now().Add(-time.Minute))
	exists := func(id int64) bool {
		_, err := c.DB.Job(ctx, id)
		if err != nil && !shoal.IsKind(err, shoal.KindNotFound) {
			t.Fatal(err)
		}
		return err == nil
	}
	// run runs a runner with keep until done holds (10 s at most).
	run := func(keep time.Duration, done func() bool) {
		r, err := jobs.NewRunner(jobs.RunnerOptions{ID: "forgetter", Jobs: c.Cat, Env: c.Env(), Lease: testsystem.Lease,
			Interval: testsystem.JobInterval, Keep: keep})
		if err != nil {
			t.Fatal(err)
		}
		r.Start()
		defer r.Close()
		for deadline := time.Now().Add(10 * time.Second); !done() && time.Now().Before(deadline); {
			time.Sleep(testsystem.JobInterval)
		}
	}
	// With Keep 0 there is nothing to wait for: five of its looks.
	looks := 0
	run(0, func() bool { looks++; return looks > 5 })
	if !exists(old) || !exists(recent) {
		t.Fatalf("with Keep 0: job %d kept %v, job %d kept %v; want both", old, exists(old), recent, exists(recent))
	}
	run(time.Hour, func() bool { return !exists(old) })
	if exists(old) || !exists(recent) {
		t.Errorf("with Keep 1h: the job that ended 2h ago kept %v (want false), the one 1m ago %v (want true)", exists(old), exists(recent))
	}
}
