package md

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/wire"
)

// defaultProgressInterval is how often a streamed operation sends
// progress: often enough for a live display, and well inside any client's
// idle timeout.
const defaultProgressInterval = time.Second

// runOp runs a long admin operation. A client that accepts wire.StreamType
// gets progress lines every Options.ProgressInterval, then the result (see
// wire.Stream); if it hangs up the operation is cancelled, and rerunning it
// resumes (every operation is idempotent). Other clients get the result
// as one JSON document when the operation ends.
func (s *Server) runOp(ctx *fasthttp.RequestCtx, tr *Tracker, run func(context.Context) (any, error)) {
	if !bytes.Contains(ctx.Request.Header.Peek(fasthttp.HeaderAccept), []byte(wire.StreamType)) {
		s.ops.Add(1)
		defer s.ops.Add(-1)
		rep, err := run(s.opsCtx)
		s.report(ctx, rep, s.opErr(err))
		return
	}
	conn := ctx.Conn()
	every := s.opts.ProgressInterval
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.SetContentType(wire.StreamType)
	ctx.Response.Header.Set("X-Accel-Buffering", "no") // nginx in front: pass each line on as it comes
	ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
		s.ops.Add(1)
		defer s.ops.Add(-1)
		opCtx, cancel := context.WithCancel(s.opsCtx)
		defer cancel()
		type result struct {
			rep any
			err error
		}
		finished := make(chan result, 1)
		go func() {
			rep, err := run(opCtx)
			finished <- result{rep, err}
		}()
		// The server's write timeout was armed once for the whole answer:
		// each line re-arms it, so an operation may run for hours.
		send := func(line wire.StreamLine) error {
			conn.SetWriteDeadline(time.Now().Add(every + time.Minute))
			return wire.WriteLine(w, line)
		}
		// A phase change sends the phases that ended; a tick also sends
		// where the current one is.
		progress := func(current bool) error {
			ps := tr.Ended()
			if current {
				ps = append(ps, tr.Snapshot())
			}
			for _, p := range ps {
				b, _ := json.Marshal(p)
				if err := send(wire.StreamLine{Progress: b}); err != nil {
					return err
				}
			}
			return nil
		}
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			current := false
			select {
			case r := <-finished:
				if r.err != nil {
					send(wire.ErrorLine(s.opErr(r.err)))
					return
				}
				b, err := json.Marshal(r.rep)
				if err != nil {
					send(wire.ErrorLine(err))
					return
				}
				if progress(true) == nil {
					send(wire.StreamLine{Result: b})
				}
				return
			case <-tick.C:
				current = true
			case <-tr.Changed():
			}
			if progress(current) != nil { // the client hung up: stop working for nobody
				cancel()
				<-finished
				return
			}
		}
	})
}

// opErr says why an operation stopped early when md is shutting down.
func (s *Server) opErr(err error) error {
	if err != nil && s.opsCtx.Err() != nil {
		return shoal.Errorf("md.admin", shoal.KindUnavailable, "md is shutting down: the operation stopped before the end (run it again)")
	}
	return err
}
