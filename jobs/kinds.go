package jobs

import (
	"context"
	"encoding/json"

	"shoal/wire"
)

// Run runs one job of kind (wire.JobRepair, …) with its arguments (JSON)
// and returns its report: wire.RepairReport, wire.DrainReport, wire.ScrubReport or
// wire.FsckReport. tr may carry a checkpoint to resume from.
func Run(ctx context.Context, env Env, kind string, args json.RawMessage, tr *Tracker) (any, error) {
	if err := wire.CheckJob(kind, args); err != nil {
		return nil, err
	}
	switch kind {
	case wire.JobRepair:
		return Repair(ctx, env, tr)
	case wire.JobDrain:
		var a wire.DrainRequest
		json.Unmarshal(args, &a)
		return Drain(ctx, env, a.Server, tr)
	case wire.JobScrub:
		var a wire.ScrubRequest
		if len(args) > 0 {
			json.Unmarshal(args, &a)
		}
		return Scrub(ctx, env, a.RateMBps, tr)
	default: // wire.JobFsck
		return Fsck(ctx, env, tr)
	}
}
