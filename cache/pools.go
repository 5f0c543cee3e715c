package cache

import (
	"context"
	"time"

	"shoal"
)

// Pools and directory mappings are read once per PUT, not on the stat
// path, so they pass through uncached, but for one fact a SoleMD process
// keeps: that no directory is mapped to a pool, so that every new file
// goes to the default pool (whose answer is kept with it). Every PUT to a
// data server asked the catalog for its pool, a sixth of a 16 KiB
// create's CPU in shoal all. Only SetDirPool adds a mapping (COPY copies
// none where none exists) and only PutPool changes the default pool: each
// drops the fact once committed.

// poolMappingCounter is an optional extra of the inner catalog
// (catalog.DB has it).
type poolMappingCounter interface {
	PoolMappings(ctx context.Context) (int, error)
}

// poolAnswer is PoolFor's answer while no mapping exists, with the
// generation of absence it was read under.
type poolAnswer struct {
	gen  uint64
	pool shoal.Pool
}

func (c *Catalog) PutPool(ctx context.Context, p shoal.Pool) error {
	err := c.inner.PutPool(ctx, p)
	c.noMappings.drop() // also on an error: a failed commit may have happened
	return err
}

func (c *Catalog) Pools(ctx context.Context) ([]shoal.Pool, error) {
	return c.inner.Pools(ctx)
}

func (c *Catalog) SetDirPool(ctx context.Context, dir, pool string) error {
	err := c.inner.SetDirPool(ctx, dir, pool)
	c.noMappings.drop()
	return err
}

func (c *Catalog) PoolFor(ctx context.Context, path string) (shoal.Pool, error) {
	counter, ok := c.inner.(poolMappingCounter)
	if c.noMappings == nil || !ok {
		return c.inner.PoolFor(ctx, path)
	}
	now := time.Now()
	gen := c.noMappings.snapshot()
	if a := c.defaultPool.Load(); a != nil && a.gen == gen && c.noMappings.known(now) {
		return a.pool, nil
	}
	p, err := c.inner.PoolFor(ctx, path)
	if err != nil || !c.noMappings.due(now) {
		return p, err
	}
	n, err := counter.PoolMappings(ctx)
	if err == nil {
		if n == 0 {
			c.defaultPool.Store(&poolAnswer{gen: gen, pool: p})
		}
		c.noMappings.learn(gen, now, n)
	}
	return p, nil
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
