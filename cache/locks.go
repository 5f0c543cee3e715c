package cache

import (
	"context"
	"time"

	"shoal"
)

// Locks are never cached: a lock taken through one md must make every
// other md answer 423 at once. The one thing kept is that no live lock
// exists at all: then every write's lock check (a catalog query a write,
// about a sixth of a small create's CPU in shoal all) is answered without
// the catalog. With Options.SoleMD that fact is kept in process, exactly,
// since only this process takes locks (noLocks, an absence); with several
// md, in L2 under a generation every lock's creation replaces
// (l2absence.go).

// probeLocks counts the live locks, if a count is due, to learn that
// none exists; it reports whether none does.
func (c *Catalog) probeLocks(ctx context.Context, now time.Time) bool {
	if !c.noLocks.due(now) {
		return false
	}
	gen := c.noLocks.snapshot()
	n, err := c.inner.CountLocks(ctx, now)
	if err != nil {
		return false
	}
	c.noLocks.learn(gen, now, n)
	return n == 0
}

func (c *Catalog) CreateLock(ctx context.Context, l *shoal.Lock, lim shoal.LockLimits, now time.Time) error {
	err := c.inner.CreateLock(ctx, l, lim, now)
	// Also on an error: a failed commit may still have happened.
	c.dropNoLocks(ctx)
	return err
}

// dropNoLocks forgets that no lock exists, in process and in L2.
func (c *Catalog) dropNoLocks(ctx context.Context) {
	c.noLocks.drop()
	if c.l2 != nil && c.noLocks == nil {
		c.l2.forget(context.WithoutCancel(ctx), c.l2.locks)
	}
}

// sharedNoLocks reports whether L2 says (or a count just found) that no
// live lock exists, for an md that is not alone on its catalog.
func (c *Catalog) sharedNoLocks(ctx context.Context, now time.Time) bool {
	v, known, gen, ok := c.l2.finding(ctx, c.l2.locks)
	switch {
	case !ok:
		return false
	case known:
		return v[0] == 0
	}
	n, err := c.inner.CountLocks(ctx, now)
	if err != nil {
		return false
	}
	c.l2.learn(ctx, c.l2.locks, gen, someOrNone(n))
	return n == 0
}

func (c *Catalog) Locks(ctx context.Context, path string, below bool, now time.Time) ([]shoal.Lock, error) {
	if c.noLocks.known(now) {
		return nil, nil
	}
	if c.noLocks != nil && c.probeLocks(ctx, now) {
		return nil, nil
	}
	if c.noLocks == nil && c.l2 != nil && c.sharedNoLocks(ctx, now) {
		return nil, nil
	}
	return c.inner.Locks(ctx, path, below, now)
}

func (c *Catalog) RefreshLock(ctx context.Context, token, path, principal string, timeout time.Duration, now time.Time) (*shoal.Lock, error) {
	l, err := c.inner.RefreshLock(ctx, token, path, principal, timeout, now)
	c.dropNoLocks(ctx)
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
