package internalapi

import (
	"encoding/json"
	"slices"
	"testing"

	"shoal"
	"shoal/wire"
)

// TestProgressLines: a follower gets each phase that ended once, in
// order, then the current one every time; a job's failure or cancel is
// an error of the job's kind (the end-to-end follow tests are md's).
func TestProgressLines(t *testing.T) {
	rec := func(cur int64, ended ...int64) json.RawMessage {
		jp := wire.JobProgress{Progress: wire.Progress{Op: "scrub", Seq: cur}}
		for _, s := range ended {
			jp.Ended = append(jp.Ended, wire.Progress{Op: "scrub", Seq: s})
		}
		b, _ := json.Marshal(jp)
		return b
	}
	seqs := func(ps []wire.Progress) (out []int64) {
		for _, p := range ps {
			out = append(out, p.Seq)
		}
		return out
	}
	var sent int64
	for _, step := range []struct {
		rec  json.RawMessage
		want []int64
	}{
		{rec(1), []int64{1}},
		{rec(3, 1, 2), []int64{1, 2, 3}},
		{rec(3, 1, 2), []int64{3}},
		{nil, nil},
		{json.RawMessage("not json"), nil},
	} {
		var ps []wire.Progress
		ps, sent = progressLines(step.rec, sent)
		if got := seqs(ps); !slices.Equal(got, step.want) {
			t.Fatalf("lines %v, want %v (sent up to %d)", got, step.want, sent)
		}
	}
	if err := jobErr(&shoal.Job{ID: 7, State: shoal.JobFailed, ErrorKind: shoal.KindUnavailable, Error: shoal.KindUnavailable.String() + ": gone"}); !shoal.IsKind(err, shoal.KindUnavailable) {
		t.Errorf("failed job: %v", err)
	}
	if err := jobErr(&shoal.Job{ID: 7, State: shoal.JobCancelled}); !shoal.IsKind(err, shoal.KindConflict) {
		t.Errorf("cancelled job: %v", err)
	}
	if err := jobErr(&shoal.Job{ID: 7, State: shoal.JobDone}); err != nil {
		t.Errorf("done job: %v", err)
	}
}
