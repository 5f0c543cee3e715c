package wire

import (
	"encoding/json"
	"slices"

	"shoal"
)

// Job kinds: the admin operations.
const (
	JobRepair = "repair" // no arguments
	JobDrain  = "drain"  // DrainRequest
	JobScrub  = "scrub"  // ScrubRequest
	JobFsck   = "fsck"   // no arguments
)

// JobKinds lists every kind, for md to refuse others at once.
var JobKinds = []string{JobRepair, JobDrain, JobScrub, JobFsck}

// JobRequest creates a job.
type JobRequest struct {
	Kind string          `json:"kind"`
	Args json.RawMessage `json:"args,omitempty"`
}

// JobID names a job.
type JobID struct {
	ID int64 `json:"id"`
}

// JobsRequest bounds a listing (0: md's default).
type JobsRequest struct {
	Limit int `json:"limit,omitempty"`
}

// JobProgress is what a job's runner records (shoal.Job.Progress): where
// it is, the phases that ended lately (so that a follower polling less
// often than phases change still shows each as it ended), and what a
// runner taking the job over needs to resume it.
type JobProgress struct {
	Progress
	Ended  []Progress      `json:"ended,omitempty"`
	Resume json.RawMessage `json:"resume,omitempty"`
}

// CheckJob reports whether kind is known and args (JSON, from an admin
// request) fit it: md refuses a bad job at once, and a runner before it
// starts one.
func CheckJob(kind string, args json.RawMessage) error {
	const op = "wire.CheckJob"
	if !slices.Contains(JobKinds, kind) {
		return shoal.Errorf(op, shoal.KindInvalid, "unknown job kind %q (want one of %v)", kind, JobKinds)
	}
	switch kind {
	case JobDrain:
		var a DrainRequest
		if err := json.Unmarshal(args, &a); err != nil || a.Server == "" {
			return shoal.Errorf(op, shoal.KindInvalid, "drain needs a server: {\"server\": ID}")
		}
	case JobScrub:
		var a ScrubRequest
		if len(args) > 0 && (json.Unmarshal(args, &a) != nil || a.RateMBps < 0) {
			return shoal.Errorf(op, shoal.KindInvalid, "scrub takes {\"rate_mb_per_s\": N ≥ 0}")
		}
	}
	return nil
}
