package cache

import (
	"context"
	"time"

	"shoal"
)

// Locks are never cached: a lock taken through one md must make every
// other md answer 423 at once, so each lock call goes to the catalog.

func (c *Catalog) CreateLock(ctx context.Context, l *shoal.Lock, lim shoal.LockLimits, now time.Time) error {
	return c.inner.CreateLock(ctx, l, lim, now)
}

func (c *Catalog) Locks(ctx context.Context, path string, below bool, now time.Time) ([]shoal.Lock, error) {
	return c.inner.Locks(ctx, path, below, now)
}

func (c *Catalog) RefreshLock(ctx context.Context, token, path, principal string, timeout time.Duration, now time.Time) (*shoal.Lock, error) {
	return c.inner.RefreshLock(ctx, token, path, principal, timeout, now)
}

func (c *Catalog) Unlock(ctx context.Context, token, path, principal string, now time.Time) error {
	return c.inner.Unlock(ctx, token, path, principal, now)
}

func (c *Catalog) ExpireLocks(ctx context.Context, now time.Time) (int, error) {
	return c.inner.ExpireLocks(ctx, now)
}

func (c *Catalog) CountLocks(ctx context.Context, now time.Time) (int, error) {
	return c.inner.CountLocks(ctx, now)
}
