package objhttp

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"
)

// Loops runs a server's background loops (heartbeats, garbage, server
// list) from Start until Stop. The zero value is ready to use.
type Loops struct {
	once   sync.Once
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Start calls start once, with a context derived from ctx that Stop
// cancels; start launches the loops with Go. Later calls, and calls after
// Stop, do nothing.
func (l *Loops) Start(ctx context.Context, start func(ctx context.Context)) {
	l.once.Do(func() {
		ctx, l.cancel = context.WithCancel(ctx)
		start(ctx)
	})
}

// Go runs f as one of the loops.
func (l *Loops) Go(f func()) { l.wg.Go(f) }

// Stop cancels the loops' context and waits for them to return.
func (l *Loops) Stop() {
	l.once.Do(func() {}) // a later Start does nothing
	if l.cancel != nil {
		l.cancel()
	}
	l.wg.Wait()
}

// Every calls f every d until ctx is done, first at once if now is set.
func Every(ctx context.Context, d time.Duration, now bool, f func()) {
	if now {
		f()
	}
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f()
		}
	}
}

// Active is the set of uploads a data server (or gw) is receiving. Its
// heartbeats report them, and md renews their reservations, so that a
// reservation whose body never came expires within a minute or two while
// one in progress lives as long as it lasts.
type Active struct {
	mu  sync.Mutex
	ids map[string]int
}

// Begin records upload as in progress; the returned func ends it.
func (a *Active) Begin(upload string) (end func()) {
	a.mu.Lock()
	if a.ids == nil {
		a.ids = map[string]int{}
	}
	a.ids[upload]++
	a.mu.Unlock()
	return func() {
		a.mu.Lock()
		if a.ids[upload]--; a.ids[upload] <= 0 {
			delete(a.ids, upload)
		}
		a.mu.Unlock()
	}
}

// List returns the uploads in progress.
func (a *Active) List() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]string, 0, len(a.ids))
	for id := range a.ids {
		out = append(out, id)
	}
	return out
}

// Beat calls f now and then every d until ctx is done. After a failure it
// tries again sooner than d: after about d/8 (at most 250 ms), doubling
// on each failure in a row up to d, with ±20% jitter so that servers that
// failed together (md's catalog was down) do not retry in step. A
// heartbeat that fails once is thus not lost for a whole interval, and
// servers are back soon after md is.
func Beat(ctx context.Context, d time.Duration, f func() error) {
	first := min(d/8, 250*time.Millisecond)
	wait := time.Duration(0)
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := f(); err != nil {
			wait = min(max(2*wait, first), d)
		} else {
			wait = 0
		}
		next := d
		if wait > 0 {
			next = wait + time.Duration((rand.Float64()*0.4-0.2)*float64(wait))
		}
		t.Reset(next)
	}
}
