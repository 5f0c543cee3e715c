package md

import (
	"sync"
	"sync/atomic"
	"time"

	"shoal/wire"
)

// Tracker is where an operation counts what it has done; the admin
// endpoint samples it to stream progress, and is told of every phase
// change, so a phase shorter than the sampling interval is still shown
// as it ended. Counting is atomic (scrub reads shards in parallel) and
// every method is a no-op on a nil *Tracker, so operations run untracked
// from tests.
type Tracker struct {
	op      string
	start   time.Time
	changed chan struct{} // a phase ended

	mu         sync.Mutex // guards the fields below
	phase      string
	unit       string
	phaseStart time.Time
	ended      []wire.Progress // phases ended since the last Ended

	done, total, bytes, problems atomic.Int64
}

// maxEnded bounds the phases kept between two samples (drain may loop
// through short phases while it waits).
const maxEnded = 16

// NewTracker starts tracking operation op.
func NewTracker(op string) *Tracker {
	t := &Tracker{op: op, start: time.Now(), changed: make(chan struct{}, 1)}
	t.Phase("starting", "", 0)
	return t
}

// Phase starts a new phase of total units (0: unknown) and resets Done.
func (t *Tracker) Phase(phase, unit string, total int64) {
	if t == nil {
		return
	}
	t.mu.Lock()
	if t.phase != "" && len(t.ended) < maxEnded {
		t.ended = append(t.ended, t.snapshot())
	}
	t.phase, t.unit, t.phaseStart = phase, unit, time.Now()
	t.total.Store(total)
	t.done.Store(0)
	t.mu.Unlock()
	select {
	case t.changed <- struct{}{}:
	default:
	}
}

// Changed is signalled when a phase ends.
func (t *Tracker) Changed() <-chan struct{} { return t.changed }

// Ended returns the phases ended since the last call, as they ended.
func (t *Tracker) Ended() []wire.Progress {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.ended
	t.ended = nil
	return e
}

// Done counts n units of the phase done.
func (t *Tracker) Done(n int64) {
	if t != nil {
		t.done.Add(n)
	}
}

// Read counts n bytes read.
func (t *Tracker) Read(n int64) {
	if t != nil {
		t.bytes.Add(n)
	}
}

// Problem counts n problems found.
func (t *Tracker) Problem(n int) {
	if t != nil {
		t.problems.Add(int64(n))
	}
}

// Snapshot is the progress now.
func (t *Tracker) Snapshot() wire.Progress {
	if t == nil {
		return wire.Progress{}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.snapshot()
}

func (t *Tracker) snapshot() wire.Progress {
	now := time.Now()
	return wire.Progress{Op: t.op, Phase: t.phase, Unit: t.unit, Done: t.done.Load(), Total: t.total.Load(),
		Bytes: t.bytes.Load(), Problems: t.problems.Load(), Elapsed: now.Sub(t.start).Milliseconds(),
		PhaseElapsed: now.Sub(t.phaseStart).Milliseconds()}
}
