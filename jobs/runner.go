package jobs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"shoal"
)

// Defaults for RunnerOptions left zero.
const (
	DefaultLease = 30 * time.Second
	DefaultSlots = 2
)

// RunnerOptions configure a Runner.
type RunnerOptions struct {
	// ID names the runner as the owner of its jobs; unique among the
	// runners sharing a catalog. Empty: host-pid-random.
	ID   string
	Jobs shoal.JobStore // required
	Env  Env            // what the operations run over (Catalog and Store required)
	// Lease is how long a job stays the runner's after its last
	// heartbeat: a runner that dies is taken over this long after.
	Lease time.Duration
	// Interval is how often the runner heartbeats its jobs (recording
	// their progress, noticing a cancel) and looks for new ones. Zero:
	// Lease/4, at most a second.
	Interval time.Duration
	Slots    int // jobs run at once; zero: DefaultSlots
	// Keep is how long a job that ended stays listed before the runner
	// deletes it (every runner does, at most every forgetEvery); zero
	// keeps every job.
	Keep   time.Duration
	Logger *slog.Logger
}

// forgetEvery bounds how often a runner deletes the jobs that ended more
// than Keep ago: one DELETE an hour, or four per Keep where Keep is short.
func (o RunnerOptions) forgetEvery() time.Duration {
	return max(min(o.Keep/4, time.Hour), o.Interval)
}

// Runner claims jobs from the catalog and runs them, each under a lease
// it renews with every heartbeat. A job cancelled in the catalog stops at
// the next heartbeat; one whose lease this runner lost (taken over, or
// the catalog unreachable for a whole lease) stops too. Close stops the
// jobs and hands them back at once (their lease ends), so that another
// runner, or this md restarted, resumes them.
type Runner struct {
	o       RunnerOptions
	log     *slog.Logger
	ctx     context.Context // ended by Close: stops claiming and the jobs
	stop    context.CancelFunc
	slots   chan struct{}
	wg      sync.WaitGroup
	poke    chan struct{} // a job was created: look now, not at the next tick
	crash   chan struct{} // closed by a test to leave jobs as a killed process would
	started sync.Once
	closed  sync.Once
}

// NewRunner checks o and makes a runner; Start starts it.
func NewRunner(o RunnerOptions) (*Runner, error) {
	if o.Jobs == nil || o.Env.Catalog == nil || o.Env.Store == nil {
		return nil, shoal.Errorf("jobs.NewRunner", shoal.KindInvalid, "Jobs, Env.Catalog and Env.Store are required")
	}
	if o.ID == "" {
		host, _ := os.Hostname()
		var b [3]byte
		rand.Read(b[:])
		o.ID = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
	}
	if o.Lease <= 0 {
		o.Lease = DefaultLease
	}
	if o.Interval <= 0 {
		o.Interval = min(o.Lease/4, time.Second)
	}
	if o.Slots <= 0 {
		o.Slots = DefaultSlots
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	o.Env = o.Env.withDefaults()
	r := &Runner{o: o, log: o.Logger.With("runner", o.ID), slots: make(chan struct{}, o.Slots),
		poke: make(chan struct{}, 1), crash: make(chan struct{})}
	r.ctx, r.stop = context.WithCancel(context.Background())
	return r, nil
}

// Start starts claiming and running jobs (once what they need is up:
// shoal all starts its runner once its data server has registered).
func (r *Runner) Start() {
	r.started.Do(func() {
		r.wg.Add(1)
		go r.loop()
	})
}

// ID is the owner name the runner claims jobs under.
func (r *Runner) ID() string { return r.o.ID }

// Poke makes the runner look for jobs now (md beside it has just created
// one) rather than at its next tick.
func (r *Runner) Poke() {
	select {
	case r.poke <- struct{}{}:
	default:
	}
}

// Close stops claiming, stops the running jobs, hands them back and
// waits.
func (r *Runner) Close() error {
	r.closed.Do(r.stop)
	r.wg.Wait()
	return nil
}

// loop claims jobs while it has free slots, every Interval, and forgets
// the jobs that ended more than Keep ago.
func (r *Runner) loop() {
	defer r.wg.Done()
	t := time.NewTicker(r.o.Interval)
	defer t.Stop()
	var forgot time.Time
	for {
		r.claim()
		if r.o.Keep > 0 && time.Since(forgot) >= r.o.forgetEvery() {
			forgot = time.Now()
			r.forget(forgot.Add(-r.o.Keep))
		}
		select {
		case <-r.ctx.Done():
			return
		case <-t.C:
		case <-r.poke:
		}
	}
}

func (r *Runner) claim() {
	for {
		select {
		case r.slots <- struct{}{}:
		default:
			return // every slot busy
		}
		ctx, cancel := context.WithTimeout(r.ctx, r.o.Lease/2)
		j, err := r.o.Jobs.ClaimJob(ctx, r.o.ID, time.Now(), r.o.Lease)
		cancel()
		if err != nil {
			<-r.slots
			if !shoal.IsKind(err, shoal.KindNotFound) && r.ctx.Err() == nil {
				r.log.Warn("claiming a job", "err", err)
			}
			return
		}
		r.log.Info("job claimed", "job", j.ID, "kind", j.Kind, "run", j.Runs)
		r.wg.Add(1)
		go func() {
			defer func() { <-r.slots }()
			defer r.wg.Done()
			r.run(j)
		}()
	}
}

// forget deletes the jobs that ended before before.
func (r *Runner) forget(before time.Time) {
	var n int64
	err := r.call(func(ctx context.Context) (err error) {
		n, err = r.o.Jobs.ForgetJobs(ctx, before)
		return err
	})
	switch {
	case err != nil && r.ctx.Err() == nil:
		r.log.Warn("forgetting old jobs", "err", err)
	case n > 0:
		r.log.Info("old jobs forgotten", "jobs", n, "ended_before", before)
	}
}

// call runs one catalog call for a job, bounded, even while closing (the
// runner's context may have ended: handing a job back must still work).
func (r *Runner) call(fn func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), r.o.Lease/2)
	defer cancel()
	return fn(ctx)
}

// run runs job j until it ends, its lease is lost, or the runner closes.
func (r *Runner) run(j *shoal.Job) {
	tr := resumeTracker(j.Kind, j.Progress)
	ctx, cancel := context.WithCancel(r.ctx)
	defer cancel()
	type outcome struct {
		rep any
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		// A bug in a maintenance job ends that job as failed, not the
		// process: md (and in shoal all, the data server) goes on serving.
		defer func() {
			if v := recover(); v != nil {
				r.log.Error("job panicked", "job", j.ID, "kind", j.Kind, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				done <- outcome{nil, shoal.Errorf("jobs.Run", shoal.KindOther, "internal error in the %s job: %v", j.Kind, v)}
			}
		}()
		rep, err := Run(ctx, r.o.Env, j.Kind, j.Args, tr)
		done <- outcome{rep, err}
	}()
	t := time.NewTicker(r.o.Interval)
	defer t.Stop()
	held := time.Now() // the lease runs to held + Lease
	var lost error
	for {
		select {
		case out := <-done:
			select {
			case <-r.crash:
				return
			default:
			}
			switch {
			case lost != nil:
				r.lost(j, tr, out.rep, lost)
			case r.ctx.Err() != nil:
				r.handBack(j, tr)
			default:
				r.finish(j, tr, out.rep, out.err)
			}
			return
		case <-r.crash:
			cancel()
			<-done
			return // as if killed: no finish, no hand-back; the lease lapses
		case <-t.C:
			now := time.Now()
			err := r.call(func(c context.Context) error {
				return r.o.Jobs.HeartbeatJob(c, j.ID, r.o.ID, tr.Record(), now, r.o.Lease)
			})
			switch {
			case err == nil:
				held = now
			case shoal.IsKind(err, shoal.KindConflict), shoal.IsKind(err, shoal.KindNotFound):
				lost = err // cancelled, or no longer ours
				cancel()
			case now.Sub(held) >= r.o.Lease:
				lost = err // the catalog was out of reach for a whole lease: another runner may have it
				cancel()
			default:
				r.log.Warn("job heartbeat failed; going on while the lease holds", "job", j.ID, "err", err)
			}
		}
	}
}

// finish records the end of a job this runner ran to its end.
func (r *Runner) finish(j *shoal.Job, tr *Tracker, rep any, runErr error) {
	end := &shoal.Job{ID: j.ID, Owner: r.o.ID, State: shoal.JobDone, Progress: tr.Record()}
	if rep != nil {
		end.Result, _ = json.Marshal(rep)
	}
	if runErr != nil {
		end.State, end.Error, end.ErrorKind = shoal.JobFailed, shoal.Reason(runErr), shoal.KindOf(runErr)
	}
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		if err = r.call(func(c context.Context) error { return r.o.Jobs.FinishJob(c, end, time.Now()) }); err == nil || shoal.IsKind(err, shoal.KindConflict) {
			break
		}
		time.Sleep(r.o.Interval)
	}
	if err != nil {
		r.log.Warn("job finished but not recorded", "job", j.ID, "state", end.State, "err", err)
		return
	}
	r.log.Info("job finished", "job", j.ID, "kind", j.Kind, "state", end.State, "err", end.Error)
}

// lost handles a job this runner stopped because its heartbeat was
// refused: a cancelled job still ours gets the report of what was done;
// one taken over (or lapsed) is left to its new runner.
func (r *Runner) lost(j *shoal.Job, tr *Tracker, rep any, why error) {
	var cur *shoal.Job
	err := r.call(func(c context.Context) (err error) { cur, err = r.o.Jobs.Job(c, j.ID); return })
	if err == nil && cur.State == shoal.JobCancelled && cur.Owner == r.o.ID {
		r.finish(j, tr, rep, shoal.Errorf("jobs", shoal.KindConflict, "job %d was cancelled", j.ID))
		return
	}
	r.log.Warn("job lost", "job", j.ID, "why", why)
}

// handBack ends the lease of a job stopped by Close, with its progress,
// so that another runner resumes it without waiting for the lease.
func (r *Runner) handBack(j *shoal.Job, tr *Tracker) {
	err := r.call(func(c context.Context) error {
		return r.o.Jobs.HeartbeatJob(c, j.ID, r.o.ID, tr.Record(), time.Now(), 0)
	})
	r.log.Info("job handed back", "job", j.ID, "err", err)
}
