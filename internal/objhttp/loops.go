package objhttp

import (
	"context"
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
