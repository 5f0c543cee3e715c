package cache

import (
	"context"
	"encoding/binary"
	"time"

	"shoal"
)

// Pools and directory mappings are read once per PUT, not on the stat
// path, so they pass through uncached, but for one fact: that no
// directory is mapped to a pool, so that every new file goes to the
// default pool (whose answer is kept with it). Every PUT to a data server
// asked the catalog for its pool, a sixth of a 16 KiB create's CPU in
// shoal all. A SoleMD process keeps the fact in process; md replicas
// share it through L2 (l2absence.go). Only SetDirPool adds a mapping
// (COPY copies none where none exists) and only PutPool changes the
// default pool: each drops the fact once committed.

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
	c.dropNoMappings(ctx) // also on an error: a failed commit may have happened
	return err
}

func (c *Catalog) Pools(ctx context.Context) ([]shoal.Pool, error) {
	return c.inner.Pools(ctx)
}

func (c *Catalog) SetDirPool(ctx context.Context, dir, pool string) error {
	err := c.inner.SetDirPool(ctx, dir, pool)
	c.dropNoMappings(ctx)
	return err
}

// dropNoMappings forgets that no mapping exists, in process and in L2.
func (c *Catalog) dropNoMappings(ctx context.Context) {
	c.noMappings.drop()
	if c.l2 != nil && c.noMappings == nil {
		c.l2.forget(context.WithoutCancel(ctx), c.l2.pools)
	}
}

func (c *Catalog) PoolFor(ctx context.Context, path string) (shoal.Pool, error) {
	counter, ok := c.inner.(poolMappingCounter)
	switch {
	case !ok:
		return c.inner.PoolFor(ctx, path)
	case c.noMappings == nil && c.l2 != nil:
		return c.sharedPoolFor(ctx, path, counter)
	case c.noMappings == nil:
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

// sharedPoolFor is PoolFor from L2's finding that no mapping exists (the
// default pool, kept with it), for an md that is not alone on its
// catalog. A finding of some mappings, or none current, asks the catalog.
func (c *Catalog) sharedPoolFor(ctx context.Context, path string, counter poolMappingCounter) (shoal.Pool, error) {
	v, known, gen, ok := c.l2.finding(ctx, c.l2.pools)
	if known && v[0] == 0 {
		if p, err := decodePool(v[1:]); err == nil {
			return p, nil
		}
	}
	p, err := c.inner.PoolFor(ctx, path)
	if err != nil || !ok || known {
		return p, err
	}
	if n, err := counter.PoolMappings(ctx); err == nil {
		v := someOrNone(n)
		if n == 0 {
			v = appendPool(v, p)
		}
		c.l2.learn(ctx, c.l2.pools, gen, v)
	}
	return p, nil
}

// appendPool encodes p for L2: its name's length and name, then its
// layout ("" for the zero layout).
func appendPool(b []byte, p shoal.Pool) []byte {
	b = binary.AppendUvarint(b, uint64(len(p.Name)))
	b = append(b, p.Name...)
	if !p.Layout.IsZero() {
		b = append(b, p.Layout.String()...)
	}
	return b
}

func decodePool(b []byte) (shoal.Pool, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return shoal.Pool{}, shoal.Errorf("cache.decodePool", shoal.KindCorrupt, "bad pool in L2")
	}
	p := shoal.Pool{Name: string(b[k : k+int(n)])}
	if rest := b[k+int(n):]; len(rest) > 0 {
		l, err := shoal.ParseLayout(string(rest))
		if err != nil {
			return shoal.Pool{}, err
		}
		p.Layout = l
	}
	return p, nil
}

// someOrNone is a finding's first byte: 0 when a count found none, 1
// when it found some.
func someOrNone(n int) []byte {
	if n > 0 {
		return []byte{1}
	}
	return []byte{0}
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
