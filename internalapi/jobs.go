package internalapi

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/internal/httperr"
	"shoal/wire"
)

// md records admin jobs in the catalog and follows them; it never runs
// them (a runner beside md does: see package jobs).

// The operation endpoints of before the jobs (wire.PathAdminRepair,
// …Drain, …Scrub, …Fsck) are kept for scripts: each creates a job of its
// kind with the body as arguments and follows it (see followJob), the
// job's id in the X-Shoal-Job header.

// defaultJobsListed is the length of a job listing that asks for none.
const defaultJobsListed = 50

// serveJobs serves the jobs endpoints; false if path is not one.
func (a *API) serveJobs(ctx *fasthttp.RequestCtx, path string, body []byte) bool {
	kind := ""
	switch path {
	case wire.PathAdminRepair:
		kind = wire.JobRepair
	case wire.PathAdminDrain:
		kind = wire.JobDrain
	case wire.PathAdminScrub:
		kind = wire.JobScrub
	case wire.PathAdminFsck:
		kind = wire.JobFsck
	case wire.PathAdminJobs:
		var req wire.JobsRequest
		if err := decodeOptional(body, &req); err != nil {
			httperr.Write(ctx, err)
			return true
		}
		if req.Limit < 0 {
			httperr.Write(ctx, shoal.Errorf("jobs", shoal.KindInvalid, "limit %d: want at least 1 (0 or none: %d)", req.Limit, defaultJobsListed))
			return true
		}
		if req.Limit == 0 {
			req.Limit = defaultJobsListed
		}
		js, err := a.cat.Jobs(a.base, req.Limit)
		answer(ctx, js, err)
	case wire.PathAdminJobCreate:
		var req wire.JobRequest
		err := decode(body, &req)
		var j *shoal.Job
		if err == nil {
			j, err = a.createJob(req.Kind, req.Args)
		}
		answer(ctx, j, err)
	case wire.PathAdminJob, wire.PathAdminJobCancel, wire.PathAdminJobFollow:
		var req wire.JobID
		if err := decode(body, &req); err != nil {
			httperr.Write(ctx, err)
			return true
		}
		switch path {
		case wire.PathAdminJob:
			j, err := a.cat.Job(a.base, req.ID)
			answer(ctx, j, err)
		case wire.PathAdminJobCancel:
			j, err := a.cat.CancelJob(a.base, req.ID, time.Now())
			answer(ctx, j, err)
		default:
			a.followJob(ctx, req.ID)
		}
	default:
		return false
	}
	if kind != "" {
		args := json.RawMessage(body)
		if len(body) == 0 {
			args = nil
		}
		j, err := a.createJob(kind, args)
		if err != nil {
			httperr.Write(ctx, err)
			return true
		}
		ctx.Response.Header.Set("X-Shoal-Job", strconv.FormatInt(j.ID, 10))
		a.followJob(ctx, j.ID)
	}
	return true
}

// createJob queues a job once its kind and arguments check out.
func (a *API) createJob(kind string, args json.RawMessage) (*shoal.Job, error) {
	if err := wire.CheckJob(kind, args); err != nil {
		return nil, err
	}
	j, err := a.cat.CreateJob(a.base, &shoal.Job{Kind: kind, Args: args})
	if err == nil && a.cfg.JobCreated != nil {
		a.cfg.JobCreated(j.ID)
	}
	return j, err
}
