package tpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http/httptrace"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"shoal"
)

// Progress is what the marker stream reports of a transfer in flight:
// the bytes moved so far and the remote connections it uses.
type Progress struct {
	bytes atomic.Int64
	mu    sync.Mutex
	conns []string
}

// maxConns bounds the connections a marker lists.
const maxConns = 16

// Bytes is the byte count so far.
func (p *Progress) Bytes() int64 { return p.bytes.Load() }

// Connections are the remote connections so far, "tcp:IP:PORT".
func (p *Progress) Connections() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.conns...)
}

func (p *Progress) connected(a net.Addr) {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return
	}
	s := "tcp:" + net.JoinHostPort(ta.IP.String(), fmt.Sprint(ta.Port))
	if ta.IP.To4() == nil {
		s = "tcp:[" + ta.IP.String() + "]:" + fmt.Sprint(ta.Port)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		if c == s {
			return
		}
	}
	if len(p.conns) < maxConns {
		p.conns = append(p.conns, s)
	}
}

// traced is ctx with a trace that records each connection's peer in p.
func traced(ctx context.Context, p *Progress) context.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) { p.connected(info.Conn.RemoteAddr()) },
	})
}

// watchdog cancels a transfer whose body stops moving: armed while a body
// streams, it fires when nothing moved for idle. The other waits (to
// connect, for the first byte) have their own timeouts in the transport.
type watchdog struct {
	idle   time.Duration
	last   atomic.Int64 // unix nanoseconds of the last progress
	armed  atomic.Bool
	cancel context.CancelCauseFunc
	stop   chan struct{}
}

// errIdle is the cause of a transfer the watchdog stopped.
type errIdle struct{ idle time.Duration }

func (e errIdle) Error() string { return fmt.Sprintf("no progress for %v (idle timeout)", e.idle) }

// watch starts a watchdog over ctx; stop ends it.
func watch(ctx context.Context, idle time.Duration) (context.Context, *watchdog, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	w := &watchdog{idle: idle, cancel: cancel, stop: make(chan struct{})}
	w.touch()
	tick := min(max(idle/8, 10*time.Millisecond), time.Second)
	go func() {
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-ctx.Done():
				return
			case now := <-t.C:
				if w.armed.Load() && now.UnixNano()-w.last.Load() > int64(idle) {
					cancel(errIdle{idle})
					return
				}
			}
		}
	}()
	var once sync.Once
	return ctx, w, func() { once.Do(func() { close(w.stop); cancel(nil) }) }
}

func (w *watchdog) touch() { w.last.Store(time.Now().UnixNano()) }

// arm starts (or stops) counting idle time.
func (w *watchdog) arm(on bool) {
	w.touch()
	w.armed.Store(on)
}

// counter counts the bytes read through it into a Progress and keeps the
// watchdog fed.
type counter struct {
	r   io.Reader
	p   *Progress
	w   *watchdog
	n   int64
	at  int64 // p's count when this reader started (a resent body starts over)
	err error // the last read's error (io.EOF at the end)
}

func (c *counter) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	if n > 0 {
		c.n += int64(n)
		c.p.bytes.Store(c.at + c.n)
		c.w.touch()
	}
	if err != nil {
		c.err = err
	}
	return n, err
}

// describe turns an outbound request's error into a failure line's
// reason: the cause a watchdog or a cancel gave, or the transport's
// error without the URL it quotes (a pre-signed URL holds credentials in
// its query), with timeouts named.
func describe(ctx context.Context, what string, u *url.URL, err error) error {
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return failf(shoal.KindTimeout, "%s %s: %v", what, Redact(u), cause)
	}
	if ctx.Err() != nil {
		return failf(shoal.KindUnavailable, "%s %s: cancelled", what, Redact(u))
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var se *shoal.Error
	if errors.As(err, &se) && se.Kind == shoal.KindPermission {
		return &Failure{Kind: shoal.KindPermission, Refused: true, Reason: fmt.Sprintf("%s %s: %s", what, Redact(u), se.Err)}
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "timeout awaiting response headers"):
		msg = "no answer in time (first-byte timeout)"
	case errors.Is(err, os.ErrDeadlineExceeded), strings.Contains(msg, "i/o timeout"):
		msg = "could not connect in time (connect timeout): " + msg
	}
	return failf(shoal.KindUnavailable, "%s %s: %s", what, Redact(u), msg)
}

// Failure is a copy that failed, with the reason its failure line gives.
type Failure struct {
	Kind   shoal.Kind
	Reason string
	// Refused: the guard refused the connection (not the peer its request).
	Refused bool
}

// Refused reports whether err is the guard refusing a connection: md
// fails such a copy at once, where a peer refusing a HEAD (a pre-signed
// URL made for GET) leaves the GET to decide.
func Refused(err error) bool {
	var f *Failure
	return errors.As(err, &f) && f.Refused
}

func (f *Failure) Error() string { return f.Reason }

// Unwrap gives shoal.KindOf and shoal.IsKind the failure's kind.
func (f *Failure) Unwrap() error { return &shoal.Error{Op: "tpc", Kind: f.Kind} }

func failf(kind shoal.Kind, format string, args ...any) error {
	return &Failure{Kind: kind, Reason: fmt.Sprintf(format, args...)}
}

// ReasonOf is the failure line's reason for err: a Failure's own, a
// shoal error's client text (kind and cause), anything else "internal
// error" (its text may hold what a client must not see).
func ReasonOf(err error) string {
	var f *Failure
	if errors.As(err, &f) {
		return f.Reason
	}
	var se *shoal.Error
	if errors.As(err, &se) {
		return se.Reason()
	}
	return "internal error"
}
