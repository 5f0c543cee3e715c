package cache

import (
	"context"
	"sync/atomic"
	"time"

	"shoal"
)

// Locks are never cached across md: a lock taken through one md must make
// every other md answer 423 at once, so with several md each lock call
// goes to the catalog. The one thing kept is, with Options.SoleMD, that no
// live lock exists at all (noLocks): then every write's lock check (a
// catalog query a write, about a sixth of a small create's CPU in shoal
// all) is answered in process, exactly, since only this process takes
// locks.

// noLocks records that the catalog held no live lock when it was last
// read. state is gen<<1 | free: a lock taken or refreshed bumps gen and
// clears free after its commit, and a reader sets free only if gen did
// not move while it counted, so a count that raced a new lock is never
// kept. free holds from freeAt on: a check of an earlier instant (the
// clock stepped back) asks the catalog.
type noLocks struct {
	state     atomic.Uint64
	freeAt    atomic.Int64 // unix ns of the count that found none
	lastProbe atomic.Int64 // unix ns of the last count that found locks
}

// probeEvery bounds how often, while locks exist, a lock check also
// counts them to learn that they are all gone.
const probeEvery = time.Second

func (n *noLocks) known(now time.Time) bool {
	return n != nil && n.state.Load()&1 == 1 && now.UnixNano() >= n.freeAt.Load()
}

// taken is called after a lock's commit, before it is answered.
func (n *noLocks) taken() {
	if n == nil {
		return
	}
	for {
		s := n.state.Load()
		if n.state.CompareAndSwap(s, (s>>1+1)<<1) {
			return
		}
	}
}

// probe counts the live locks when none is known and the last count is
// older than probeEvery, and records their absence; it reports whether
// there are none.
func (n *noLocks) probe(ctx context.Context, inner shoal.Catalog, now time.Time) bool {
	last := n.lastProbe.Load()
	if now.UnixNano()-last < int64(probeEvery) && now.UnixNano() >= last {
		return false
	}
	s := n.state.Load()
	count, err := inner.CountLocks(ctx, now)
	if err != nil || count > 0 {
		n.lastProbe.Store(now.UnixNano())
		return false
	}
	n.freeAt.Store(now.UnixNano())
	n.state.CompareAndSwap(s&^1, s|1)
	return true
}

func (c *Catalog) CreateLock(ctx context.Context, l *shoal.Lock, lim shoal.LockLimits, now time.Time) error {
	err := c.inner.CreateLock(ctx, l, lim, now)
	// Also on an error: a failed commit may still have happened.
	c.noLocks.taken()
	return err
}

func (c *Catalog) Locks(ctx context.Context, path string, below bool, now time.Time) ([]shoal.Lock, error) {
	if c.noLocks.known(now) {
		return nil, nil
	}
	if c.noLocks != nil && c.noLocks.probe(ctx, c.inner, now) {
		return nil, nil
	}
	return c.inner.Locks(ctx, path, below, now)
}

func (c *Catalog) RefreshLock(ctx context.Context, token, path, principal string, timeout time.Duration, now time.Time) (*shoal.Lock, error) {
	l, err := c.inner.RefreshLock(ctx, token, path, principal, timeout, now)
	c.noLocks.taken()
	return l, err
}

func (c *Catalog) Unlock(ctx context.Context, token, path, principal string, now time.Time) error {
	return c.inner.Unlock(ctx, token, path, principal, now)
}

func (c *Catalog) ExpireLocks(ctx context.Context, now time.Time) (int, error) {
	return c.inner.ExpireLocks(ctx, now)
}

func (c *Catalog) CountLocks(ctx context.Context, now time.Time) (int, error) {
	if c.noLocks.known(now) {
		return 0, nil
	}
	return c.inner.CountLocks(ctx, now)
}
