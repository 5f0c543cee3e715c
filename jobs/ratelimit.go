package jobs

import (
	"context"
	"io"
	"sync"
	"time"

	"shoal"
)

// rateLimit bounds the bytes per second a background operation reads
// (scrub), so that it does not starve user traffic. A nil or zero-rate
// limit does not wait.
type rateLimit struct {
	perSec float64
	mu     sync.Mutex
	next   time.Time // when the bytes granted so far are paid for
}

func newRateLimit(bytesPerSec float64) *rateLimit {
	if bytesPerSec <= 0 {
		return nil
	}
	return &rateLimit{perSec: bytesPerSec}
}

// wait blocks until n more bytes fit the rate.
func (l *rateLimit) wait(ctx context.Context, n int) error {
	if l == nil || n <= 0 {
		return nil
	}
	l.mu.Lock()
	now := time.Now()
	if l.next.Before(now) {
		l.next = now
	}
	l.next = l.next.Add(time.Duration(float64(n) / l.perSec * float64(time.Second)))
	d := l.next.Sub(now)
	l.mu.Unlock()
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return shoal.E("jobs.scrub", shoal.KindTimeout, ctx.Err())
	}
}

type limitedReader struct {
	r   io.Reader
	lim *rateLimit
	ctx context.Context
}

func (l *limitedReader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	if werr := l.lim.wait(l.ctx, n); werr != nil {
		return n, werr
	}
	return n, err
}

// limitedStore wraps a data server's store so that every ReadAt of its
// objects waits for the rate (ec.Verify reads shards through it).
type limitedStore struct {
	shoal.BlobStore
	lim *rateLimit
	ctx context.Context
}

func (s limitedStore) Open(ctx context.Context, id string) (shoal.Object, error) {
	o, err := s.BlobStore.Open(ctx, id)
	if err != nil {
		return nil, err
	}
	return limitedObject{o, s}, nil
}

type limitedObject struct {
	shoal.Object
	s limitedStore
}

func (o limitedObject) ReadAt(p []byte, off int64) (int, error) {
	n, err := o.Object.ReadAt(p, off)
	if werr := o.s.lim.wait(o.s.ctx, n); werr != nil && err == nil {
		err = werr
	}
	return n, err
}
