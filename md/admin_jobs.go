package md

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

// handleAdminJobs serves the jobs endpoints; false if path is not one.
func (s *Server) handleAdminJobs(ctx *fasthttp.RequestCtx, path string, body []byte) bool {
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
		if req.Limit <= 0 {
			req.Limit = defaultJobsListed
		}
		js, err := s.cat.Jobs(s.base, req.Limit)
		s.answer(ctx, js, err)
	case wire.PathAdminJobCreate:
		var req wire.JobRequest
		err := decode(body, &req)
		var j *shoal.Job
		if err == nil {
			j, err = s.createJob(req.Kind, req.Args)
		}
		s.answer(ctx, j, err)
	case wire.PathAdminJob, wire.PathAdminJobCancel, wire.PathAdminJobFollow:
		var req wire.JobID
		if err := decode(body, &req); err != nil {
			httperr.Write(ctx, err)
			return true
		}
		switch path {
		case wire.PathAdminJob:
			j, err := s.cat.Job(s.base, req.ID)
			s.answer(ctx, j, err)
		case wire.PathAdminJobCancel:
			j, err := s.cat.CancelJob(s.base, req.ID, time.Now())
			s.answer(ctx, j, err)
		default:
			s.followJob(ctx, req.ID)
		}
	default:
		return false
	}
	if kind != "" {
		args := json.RawMessage(body)
		if len(body) == 0 {
			args = nil
		}
		j, err := s.createJob(kind, args)
		if err != nil {
			httperr.Write(ctx, err)
			return true
		}
		ctx.Response.Header.Set("X-Shoal-Job", strconv.FormatInt(j.ID, 10))
		s.followJob(ctx, j.ID)
	}
	return true
}

// createJob queues a job once its kind and arguments check out.
func (s *Server) createJob(kind string, args json.RawMessage) (*shoal.Job, error) {
	if err := wire.CheckJob(kind, args); err != nil {
		return nil, err
	}
	j, err := s.cat.CreateJob(s.base, &shoal.Job{Kind: kind, Args: args})
	if err == nil && s.opts.JobCreated != nil {
		s.opts.JobCreated(j.ID)
	}
	return j, err
}

// answer replies v as JSON, or err.
func (s *Server) answer(ctx *fasthttp.RequestCtx, v any, err error) {
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	s.replyJSON(ctx, fasthttp.StatusOK, v)
}

// decodeOptional is decode for a body that may be empty.
func decodeOptional(body []byte, v any) error {
	if len(body) == 0 {
		return nil
	}
	return decode(body, v)
}
