package cache

import (
	"context"
	"time"

	"shoal"
)

var (
	_ shoal.PoolStore       = (*Catalog)(nil)
	_ shoal.ReplicaReplacer = (*Catalog)(nil)
)

// Pools and directory mappings are read once per PUT, not on the stat
// path, so they pass through uncached.

func (c *Catalog) poolStore(op string) (shoal.PoolStore, error) {
	ps, ok := c.inner.(shoal.PoolStore)
	if !ok {
		return nil, shoal.Errorf(op, shoal.KindUnsupported, "the catalog has no pools")
	}
	return ps, nil
}

func (c *Catalog) PutPool(ctx context.Context, p shoal.Pool) error {
	ps, err := c.poolStore("cache.PutPool")
	if err != nil {
		return err
	}
	return ps.PutPool(ctx, p)
}

func (c *Catalog) Pools(ctx context.Context) ([]shoal.Pool, error) {
	ps, err := c.poolStore("cache.Pools")
	if err != nil {
		return nil, err
	}
	return ps.Pools(ctx)
}

func (c *Catalog) SetDirPool(ctx context.Context, dir, pool string) error {
	ps, err := c.poolStore("cache.SetDirPool")
	if err != nil {
		return err
	}
	return ps.SetDirPool(ctx, dir, pool)
}

func (c *Catalog) PoolFor(ctx context.Context, path string) (shoal.Pool, error) {
	ps, err := c.poolStore("cache.PoolFor")
	if err != nil {
		return shoal.Pool{}, err
	}
	return ps.PoolFor(ctx, path)
}

// ReplaceReplica changes where a file's data is: its cached entry (which
// carries the replicas) is forgotten.
func (c *Catalog) ReplaceReplica(ctx context.Context, path string, old, new shoal.Replica, graceUntil time.Time) error {
	rr, ok := c.inner.(shoal.ReplicaReplacer)
	if !ok {
		return shoal.Errorf("cache.ReplaceReplica", shoal.KindUnsupported, "the catalog cannot replace replicas")
	}
	err := rr.ReplaceReplica(ctx, path, old, new, graceUntil)
	if mayHaveChanged(err) {
		c.invalidate(ctx, touched{path, changedNode})
	}
	return err
}
