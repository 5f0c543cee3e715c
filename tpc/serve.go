package tpc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"runtime/debug"
	"time"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/internal/netguard"
)

// Run is the work behind a marker stream: a Pull or a Push with its sink
// or source. Cancelling ctx (the client hung up) must abort it, leaving
// nothing visible.
type Run func(ctx context.Context, p *Progress) error

// errClientGone is the cause of a transfer whose client hung up.
var errClientGone = errors.New("the client hung up on the marker stream")

// peerPoll is how often the stream looks whether its client is still
// there between markers.
const peerPoll = 250 * time.Millisecond

// Serve answers ctx with 202 and text/plain, then streams markers while
// run goes on in the background: one at once, one every MarkerInterval,
// one at the end, each flushed; then the final line, "success: Created"
// or "failure: <reason>" — also when run panics. A client that hangs up
// cancels run. Each transfer is counted and logged once (the remote
// without its query, no header).
func (c *Client) Serve(ctx *fasthttp.RequestCtx, mode Mode, remote *url.URL, run Run) {
	conn := ctx.Conn()
	ctx.SetStatusCode(fasthttp.StatusAccepted)
	ctx.SetContentType("text/plain")
	ctx.Response.Header.Set(fasthttp.HeaderCacheControl, "no-cache")
	start := time.Now()
	ctx.SetBodyStreamWriter(func(w *bufio.Writer) { c.stream(w, conn, mode, remote, run, start) })
}

// Fail answers ctx as Serve would for a copy that failed before it could
// start (md found the source missing, or the guard refused it): 202 and
// the failure line, counted like any other transfer.
func (c *Client) Fail(ctx *fasthttp.RequestCtx, mode Mode, remote *url.URL, err error) {
	c.Serve(ctx, mode, remote, func(context.Context, *Progress) error { return err })
}

func (c *Client) stream(w *bufio.Writer, conn net.Conn, mode Mode, remote *url.URL, run Run, start time.Time) {
	p := &Progress{}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	done := make(chan error, 1)
	go func() {
		defer func() {
			if v := recover(); v != nil {
				c.log.Error("tpc: transfer panicked", "mode", mode.String(), "remote", Redact(remote), "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				done <- failf(shoal.KindOther, "internal error")
			}
		}()
		done <- run(ctx, p)
	}()

	var err error
	gone, finished := false, false
	defer func() {
		// The stream never ends without a final line: not even when
		// writing it panicked.
		if v := recover(); v != nil {
			c.log.Error("tpc: marker stream panicked", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			if !finished {
				cancel(errClientGone)
				w.WriteString(FailureLine("internal error") + "\n")
				w.Flush()
			}
		}
	}()
	var reported int64
	buf := make([]byte, 0, 256)
	marker := func() error {
		n := max(p.Bytes(), reported) // a body sent again after a redirect starts over
		reported = n
		buf = AppendMarker(buf[:0], time.Now(), n, p.Connections())
		if _, err := w.Write(buf); err != nil {
			return err
		}
		return w.Flush()
	}
	hangUp := func() {
		gone = true
		cancel(errClientGone)
		err = <-done
	}
	if marker() != nil {
		hangUp()
	}
	tick := time.NewTicker(c.opts.MarkerInterval)
	defer tick.Stop()
	poll := time.NewTicker(peerPoll)
	defer poll.Stop()
	for !gone {
		select {
		case err = <-done:
			goto end
		case <-tick.C:
			if marker() != nil {
				hangUp()
			}
		case <-poll.C:
			if conn != nil && netguard.PeerClosed(conn) {
				hangUp()
			}
		}
	}
end:
	result := statSuccess
	switch {
	case gone:
		result = statCancelled
	case err != nil:
		result = statFailure
	}
	if !gone {
		line := SuccessLine
		if err != nil {
			line = FailureLine(ReasonOf(err))
		}
		if marker() == nil {
			w.WriteString(line + "\n")
			w.Flush()
		}
	}
	finished = true
	d := time.Since(start)
	c.stats.record(mode, result, max(p.Bytes(), reported), d)
	attrs := []any{"mode", mode.String(), "remote", Redact(remote), "result", StatResults[result], "bytes", max(p.Bytes(), reported), "duration", d}
	if err != nil {
		attrs = append(attrs, "reason", ReasonOf(err))
	}
	c.log.Info("tpc transfer", attrs...)
}
