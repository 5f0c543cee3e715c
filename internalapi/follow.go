package internalapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/internal/httperr"
	"shoal/wire"
)

// DefaultProgressInterval is how often a followed job's progress is read
// and sent: often enough for a live display, and well inside any client's
// idle timeout.
const DefaultProgressInterval = time.Second

// followCatalogDown is how long a follower goes on while the catalog does
// not answer before it says so and ends.
const followCatalogDown = 30 * time.Second

// followJob follows job id, whichever runner runs it. A client that
// accepts wire.StreamType gets its progress every Config.ProgressInterval
// (each phase that ended since, then where it is), then its result or
// error (see wire.Stream); hanging up leaves the job running. Other
// clients get the result as one JSON document when the job ends.
func (a *API) followJob(ctx *fasthttp.RequestCtx, id int64) {
	if !bytes.Contains(ctx.Request.Header.Peek(fasthttp.HeaderAccept), []byte(wire.StreamType)) {
		j, err := a.waitJob(id, nil)
		if err == nil {
			err = jobErr(j)
		}
		if err != nil {
			httperr.Write(ctx, err)
			return
		}
		ctx.SetStatusCode(fasthttp.StatusOK)
		ctx.SetContentType("application/json")
		ctx.SetBody(j.Result)
		return
	}
	conn := ctx.Conn()
	every := a.cfg.ProgressInterval
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.SetContentType(wire.StreamType)
	ctx.Response.Header.Set("X-Accel-Buffering", "no") // nginx in front: pass each line on as it comes
	httperr.StreamWriter(ctx, func(w *bufio.Writer) {
		// The server's write timeout was armed once for the whole answer:
		// each line re-arms it, so a job may be followed for hours.
		send := func(line wire.StreamLine) error {
			conn.SetWriteDeadline(time.Now().Add(every + time.Minute))
			return wire.WriteLine(w, line)
		}
		j, err := a.waitJob(id, func(p []wire.Progress) error {
			for _, pr := range p {
				b, _ := json.Marshal(pr)
				if err := send(wire.StreamLine{Progress: b}); err != nil {
					return err // the client hung up: the job goes on
				}
			}
			return nil
		})
		if err == nil {
			err = jobErr(j)
		}
		if err != nil {
			send(wire.ErrorLine(err))
			return
		}
		send(wire.StreamLine{Result: j.Result})
	})
}

// waitJob reads job id every ProgressInterval until it is finished,
// handing progress (each phase that ended since the last read, then the
// current one; nil: ignored) each time. It ends early when progress
// fails (the follower hung up), md shuts down (EndFollowing), or the catalog stays out
// of reach for followCatalogDown.
func (a *API) waitJob(id int64, progress func([]wire.Progress) error) (*shoal.Job, error) {
	t := time.NewTicker(a.cfg.ProgressInterval)
	defer t.Stop()
	var sentSeq int64 // phases up to this one were sent as they ended
	lastRead := time.Now()
	for {
		j, err := a.cat.Job(a.follow, id)
		switch {
		case a.follow.Err() != nil:
			return nil, shoal.Errorf("md.admin", shoal.KindUnavailable,
				"md is shutting down: job %d goes on (follow it through another md: shoal admin job follow %d)", id, id)
		case shoal.IsKind(err, shoal.KindNotFound):
			return nil, err
		case err != nil && time.Since(lastRead) > followCatalogDown:
			return nil, err
		case err == nil:
			lastRead = time.Now()
			if progress != nil {
				var ps []wire.Progress
				ps, sentSeq = progressLines(j.Progress, sentSeq)
				if perr := progress(ps); perr != nil {
					return nil, perr
				}
			}
			if j.State.Finished() {
				return j, nil
			}
		}
		select {
		case <-t.C:
		case <-a.follow.Done():
		}
	}
}

// progressLines are the lines a recorded progress gives a follower that
// has seen the phases that ended up to sentSeq: those ended since, then
// the current phase; and the new sentSeq.
func progressLines(recorded json.RawMessage, sentSeq int64) ([]wire.Progress, int64) {
	var jp wire.JobProgress
	if len(recorded) == 0 || json.Unmarshal(recorded, &jp) != nil {
		return nil, sentSeq
	}
	var out []wire.Progress
	for _, p := range jp.Ended {
		if p.Seq > sentSeq {
			out = append(out, p)
			sentSeq = p.Seq
		}
	}
	return append(out, jp.Progress), sentSeq
}

// jobErr is why a finished job gives no result: its error, or its cancel.
func jobErr(j *shoal.Job) error {
	switch j.State {
	case shoal.JobFailed: // j.Error is the error's Reason: its kind, then the cause
		return shoal.Errorf("job", j.ErrorKind, "%s", strings.TrimPrefix(j.Error, j.ErrorKind.String()+": "))
	case shoal.JobCancelled:
		return shoal.Errorf("job", shoal.KindConflict, "job %d was cancelled", j.ID)
	}
	return nil
}
