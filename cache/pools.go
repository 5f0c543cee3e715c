package cache

import (
	"context"
	"time"

	"shoal"
)

// Pools and directory mappings are read once per PUT, not on the stat
// path, so they pass through uncached.

func (c *Catalog) PutPool(ctx context.Context, p shoal.Pool) error {
	return c.inner.PutPool(ctx, p)
}

func (c *Catalog) Pools(ctx context.Context) ([]shoal.Pool, error) {
	return c.inner.Pools(ctx)
}

func (c *Catalog) SetDirPool(ctx context.Context, dir, pool string) error {
	return c.inner.SetDirPool(ctx, dir, pool)
}

func (c *Catalog) PoolFor(ctx context.Context, path string) (shoal.Pool, error) {
	return c.inner.PoolFor(ctx, path)
}

// ReplaceReplica changes where a file's data is: its cached entry (which
// carries the replicas) is forgotten.
func (c *Catalog) ReplaceReplica(ctx context.Context, path string, old, new shoal.Replica, graceUntil time.Time) error {
	err := c.inner.ReplaceReplica(ctx, path, old, new, graceUntil)
	if mayHaveChanged(err) {
		c.invalidate(ctx, touched{path, changedNode})
	}
	return err
}
