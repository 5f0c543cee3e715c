package jobs

import (
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"shoal/wire"
)

// Tracker is where an operation counts what it has done and leaves what a
// runner taking it over needs to resume it. The runner records it with
// each heartbeat (Record: wire.JobProgress); md streams it to whoever
// follows the job. Phases that end are kept (the last maxEnded), so a
// phase shorter than the heartbeat is still shown as it ended. Counting is
// atomic (scrub reads shards in parallel) and every method is a no-op on a
// nil *Tracker, so operations run untracked from tests.
type Tracker struct {
	op    string
	start time.Time // of the job's first run: a resumed job's elapsed time goes on

	mu         sync.Mutex // guards the fields below
	phase      string
	unit       string
	seq        int64
	phaseStart time.Time
	ended      []wire.Progress // the latest phases that ended, oldest first
	resume     json.RawMessage // the last checkpoint
	resumedAt  time.Time       // when the last checkpoint was taken
	from       *checkpoint     // left by the run this one takes over

	done, total, bytes, problems atomic.Int64
}

// maxEnded bounds the ended phases kept (drain may loop through short
// phases while it waits).
const maxEnded = 16

// checkpointEvery bounds how often a checkpoint is encoded: a takeover
// redoes at most this much work (repair and scrub per file are
// idempotent).
const checkpointEvery = 200 * time.Millisecond

// checkpoint is what resuming needs: the operation's own state, and the
// counters as they were when it was taken (so that bytes and problems
// are not counted twice).
type checkpoint struct {
	Bytes    int64           `json:"bytes"`
	Problems int64           `json:"problems"`
	State    json.RawMessage `json:"state"`
}

// NewTracker starts tracking operation op.
func NewTracker(op string) *Tracker {
	t := &Tracker{op: op, start: time.Now()}
	t.Phase("starting", "", 0)
	return t
}

// resumeTracker continues tracking a job from its recorded progress (nil:
// a fresh start): its elapsed time, phase numbers and checkpoint.
func resumeTracker(op string, recorded json.RawMessage) *Tracker {
	var jp wire.JobProgress
	if len(recorded) == 0 || json.Unmarshal(recorded, &jp) != nil {
		return NewTracker(op)
	}
	t := &Tracker{op: op, start: time.Now().Add(-time.Duration(jp.Elapsed) * time.Millisecond), seq: jp.Seq, ended: jp.Ended}
	var cp checkpoint
	if len(jp.Resume) > 0 && json.Unmarshal(jp.Resume, &cp) == nil {
		t.from = &cp
		t.resume = jp.Resume
		t.bytes.Store(cp.Bytes)
		t.problems.Store(cp.Problems)
	}
	t.Phase("resuming", "", 0)
	return t
}

// Resume decodes the state a previous run checkpointed into v; false if
// there is none (a fresh start, or a job that keeps no state).
func (t *Tracker) Resume(v any) bool {
	if t == nil || t.from == nil || len(t.from.State) == 0 {
		return false
	}
	return json.Unmarshal(t.from.State, v) == nil
}

// Checkpoint records v (JSON) as what a takeover resumes from, at most
// every checkpointEvery unless force. v is encoded at once: the caller
// may change it after.
func (t *Tracker) Checkpoint(v any, force bool) {
	if t == nil {
		return
	}
	now := time.Now()
	t.mu.Lock()
	due := force || now.Sub(t.resumedAt) >= checkpointEvery
	t.mu.Unlock()
	if !due {
		return
	}
	state, err := json.Marshal(v)
	if err != nil {
		return
	}
	b, _ := json.Marshal(checkpoint{Bytes: t.bytes.Load(), Problems: t.problems.Load(), State: state})
	t.mu.Lock()
	t.resume, t.resumedAt = b, now
	t.mu.Unlock()
}

// Phase starts a new phase of total units (0: unknown) and resets Done.
func (t *Tracker) Phase(phase, unit string, total int64) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.phase != "" {
		t.ended = append(t.ended, t.snapshot())
		if len(t.ended) > maxEnded {
			t.ended = append(t.ended[:0:0], t.ended[len(t.ended)-maxEnded:]...)
		}
	}
	t.seq++
	t.phase, t.unit, t.phaseStart = phase, unit, time.Now()
	t.total.Store(total)
	t.done.Store(0)
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

// Elapsed is the time since the job first started, over all its runs.
func (t *Tracker) Elapsed() time.Duration {
	if t == nil {
		return 0
	}
	return time.Since(t.start)
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
	return wire.Progress{Op: t.op, Phase: t.phase, Seq: t.seq, Unit: t.unit, Done: t.done.Load(), Total: t.total.Load(),
		Bytes: t.bytes.Load(), Problems: t.problems.Load(), Elapsed: now.Sub(t.start).Milliseconds(),
		PhaseElapsed: now.Sub(t.phaseStart).Milliseconds()}
}

// Record is what the runner stores with a heartbeat: the progress now,
// the phases that ended lately, and the last checkpoint.
func (t *Tracker) Record() json.RawMessage {
	t.mu.Lock()
	jp := wire.JobProgress{Progress: t.snapshot(), Ended: append([]wire.Progress(nil), t.ended...), Resume: t.resume}
	t.mu.Unlock()
	b, _ := json.Marshal(jp)
	return b
}
