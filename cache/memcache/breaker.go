package memcache

import (
	"sync/atomic"
	"time"
)

// breaker counts consecutive failures; at threshold it opens for backoff,
// during which allow says no. After the backoff requests flow again: one
// more failure reopens it at once (the count is still at threshold), one
// success closes it.
type breaker struct {
	threshold int64
	backoff   time.Duration
	failures  atomic.Int64
	openUntil atomic.Int64 // UnixNano; 0 when closed
}

func (b *breaker) allow() bool {
	until := b.openUntil.Load()
	return until == 0 || time.Now().UnixNano() >= until
}

func (b *breaker) success() {
	if b.failures.Load() != 0 {
		b.failures.Store(0)
	}
	if b.openUntil.Load() != 0 {
		b.openUntil.Store(0)
	}
}

func (b *breaker) failure() {
	if b.failures.Add(1) >= b.threshold {
		b.openUntil.Store(time.Now().Add(b.backoff).UnixNano())
	}
}
