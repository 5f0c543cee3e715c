package shoal

import (
	"context"
	"encoding/json"
	"time"
)

// JobState is where an admin job (repair, drain, scrub, fsck) is in its
// life: queued until a runner claims it, running while its owner
// heartbeats, then done, failed or cancelled for good.
type JobState string

const (
	JobQueued    JobState = "queued"
	JobRunning   JobState = "running"
	JobDone      JobState = "done"
	JobFailed    JobState = "failed"
	JobCancelled JobState = "cancelled"
)

// Finished reports whether the job will not run again.
func (s JobState) Finished() bool {
	return s == JobDone || s == JobFailed || s == JobCancelled
}

// Job is an admin operation recorded in the catalog, so that any md's
// runner can run it, and another take it over when its runner dies.
type Job struct {
	ID   int64           `json:"id"`
	Kind string          `json:"kind"`           // repair, drain, scrub or fsck
	Args json.RawMessage `json:"args,omitempty"` // the kind's arguments (JSON)

	State JobState `json:"state"`
	// Progress is the owner's last report: what it is doing (for those
	// who follow the job) and what a runner taking it over needs to
	// resume it (a cursor).
	Progress  json.RawMessage `json:"progress,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"` // the report, once finished
	Error     string          `json:"error,omitempty"`  // why it failed
	ErrorKind Kind            `json:"error_kind,omitempty"`

	Owner      string    `json:"owner,omitempty"` // the runner holding it (or that held it last)
	Runs       int       `json:"runs"`            // times claimed: above one, it was taken over
	Heartbeat  time.Time `json:"heartbeat"`       // the owner's last heartbeat
	LeaseUntil time.Time `json:"lease_until"`     // after this another runner may take it over
	Created    time.Time `json:"created"`
	Updated    time.Time `json:"updated"`
}

// JobStore keeps the admin jobs. Runners claim jobs under a lease that
// they renew with each heartbeat; a job whose lease lapsed (its runner
// died or lost the catalog) is claimed by another runner, which resumes
// it from its recorded progress. Times are the caller's clock: runners
// sharing a catalog need clocks in step to well within a lease.
type JobStore interface {
	// CreateJob records a queued job of j.Kind with j.Args and returns it
	// with its ID. KindInvalid if Kind is empty.
	CreateJob(ctx context.Context, j *Job) (*Job, error)

	// Jobs lists the newest jobs first, at most limit of them, without
	// their Result.
	Jobs(ctx context.Context, limit int) ([]Job, error)

	// Job returns one job, Result included. KindNotFound if unknown.
	Job(ctx context.Context, id int64) (*Job, error)

	// ClaimJob makes owner the runner of the oldest queued job, or of a
	// running one whose lease ended before now, until now+lease: state
	// running, Runs one more, Progress kept. Exactly one of several
	// concurrent claimers gets a given job. KindNotFound if there is none.
	ClaimJob(ctx context.Context, owner string, now time.Time, lease time.Duration) (*Job, error)

	// HeartbeatJob records progress and extends the lease to now+lease,
	// only while owner holds the job: it is running, owned by owner, and
	// its lease has not lapsed at now. Otherwise KindConflict (cancelled,
	// taken over, or lapsed: the runner must stop), or KindNotFound.
	HeartbeatJob(ctx context.Context, id int64, owner string, progress json.RawMessage, now time.Time, lease time.Duration) error

	// FinishJob ends job j.ID in j.State (done, failed or cancelled) with
	// j.Progress, j.Result, j.Error and j.ErrorKind, only if j.Owner owns
	// it (its lease may have lapsed: nobody took it over). A job cancelled
	// meanwhile stays cancelled but keeps the result. KindConflict if
	// another runner owns it or it is done or failed; KindInvalid for a
	// state that is not final.
	FinishJob(ctx context.Context, j *Job, now time.Time) error

	// CancelJob cancels a queued or running job (its runner notices at
	// its next heartbeat and stops) and returns it. Cancelling a cancelled
	// job changes nothing; a done or failed one is KindConflict.
	CancelJob(ctx context.Context, id int64, now time.Time) (*Job, error)

	// ForgetJobs deletes the jobs that ended before before (done, failed,
	// or cancelled with no lease running past it: a runner may still be
	// finishing a cancelled job) and says how many.
	ForgetJobs(ctx context.Context, before time.Time) (int64, error)
}
