package cache

import (
	"context"
	"sync/atomic"
	"time"

	"shoal"
)

// Catalog is a shoal.Catalog that answers Stat from its tiers (L1, then
// L2, then the inner catalog, filling the tiers on the way back) and
// invalidates them after every mutation. Everything else passes through.
type Catalog struct {
	inner   shoal.Catalog
	l1      *l1[*shoal.Entry] // Stat answers; nil when off
	l1props *l1[[]shoal.Prop] // Props answers; nil when L1 is off
	l2      *l2               // nil when off
	noLocks *absence          // of live locks; nil unless Options.SoleMD
	// noMappings: no directory is mapped to a pool (nil unless SoleMD);
	// defaultPool is PoolFor's answer then.
	noMappings  *absence
	defaultPool atomic.Pointer[poolAnswer]
	counters    counters
}

var _ shoal.Catalog = (*Catalog)(nil)

// NewCatalog puts the tiers described by opts in front of inner. Close
// closes inner; the L2 tier belongs to the caller.
func NewCatalog(inner shoal.Catalog, opts Options) *Catalog {
	opts = opts.withDefaults()
	c := &Catalog{inner: inner}
	if opts.L1 {
		c.l1 = newL1[*shoal.Entry](opts.L1Size, opts.L1TTL, opts.NegativeTTL)
		c.l1props = newL1[[]shoal.Prop](opts.L1Size, opts.L1TTL, opts.NegativeTTL)
	}
	if opts.SoleMD {
		c.noLocks, c.noMappings = &absence{}, &absence{}
	}
	if opts.L2 != nil {
		c.l2 = &l2{c: opts.L2, prefix: opts.KeyPrefix, ttl: opts.L2TTL, negTTL: opts.NegativeTTL, cnt: &c.counters}
		c.l2.locks, c.l2.pools = c.l2.makeFact("locks"), c.l2.makeFact("pools")
	}
	return c
}

// Inner returns the catalog behind the cache.
func (c *Catalog) Inner() shoal.Catalog { return c.inner }

// isNegative reports whether err is an answer worth caching: the path does
// not exist, or an ancestor is a file.
func isNegative(err error) bool {
	k := shoal.KindOf(err)
	return k == shoal.KindNotFound || k == shoal.KindNotDir
}

// Stat answers from L1, L2 or the inner catalog, in that order.
func (c *Catalog) Stat(ctx context.Context, path string) (*shoal.Entry, error) {
	var tok l1Token
	if c.l1 != nil {
		if e, err, ok := c.l1.get(path); ok {
			c.counters.l1.hits.Add(1)
			return e, err
		}
		c.counters.l1.misses.Add(1)
		tok = c.l1.token(path)
	}
	var gens []uint64
	if c.l2 != nil {
		r := c.l2.stat(ctx, path)
		if r.hit {
			var err error
			if r.entry == nil {
				err = shoal.E("cache.Stat", path, r.kind)
			}
			if c.l1 != nil {
				c.l1.put(path, tok, r.entry, err)
			}
			return r.entry, err
		}
		gens = r.gens
	}
	c.counters.inner.Add(1)
	e, err := c.inner.Stat(ctx, path)
	if err != nil && !isNegative(err) {
		return nil, err
	}
	if gens != nil {
		c.l2.fill(ctx, path, gens, e, shoal.KindOf(err))
	}
	if c.l1 != nil {
		c.l1.put(path, tok, e, err)
	}
	return e, err
}

// The rest of the read side passes through (dead properties excepted:
// props.go): listings, usage and the server/garbage bookkeeping are not
// cached.

func (c *Catalog) List(ctx context.Context, dir string) ([]*shoal.Entry, error) {
	return c.inner.List(ctx, dir)
}

// ListPage reads the catalog itself, like List: a page is read once per
// listing, and the rows it holds are the newest.
func (c *Catalog) ListPage(ctx context.Context, dir, after string, limit int, props bool) (shoal.Page, error) {
	return c.inner.ListPage(ctx, dir, after, limit, props)
}

func (c *Catalog) Usage(ctx context.Context, path string) (bytes, files int64, err error) {
	return c.inner.Usage(ctx, path)
}

func (c *Catalog) BeginUpload(ctx context.Context, u *shoal.Upload) error {
	return c.inner.BeginUpload(ctx, u)
}

func (c *Catalog) ExpireUploads(ctx context.Context, now time.Time) (int, error) {
	return c.inner.ExpireUploads(ctx, now)
}

func (c *Catalog) PutServer(ctx context.Context, s *shoal.Server) error {
	return c.inner.PutServer(ctx, s)
}

func (c *Catalog) Servers(ctx context.Context) ([]shoal.Server, error) {
	return c.inner.Servers(ctx)
}

func (c *Catalog) SetServerState(ctx context.Context, id string, state shoal.ServerState) error {
	return c.inner.SetServerState(ctx, id, state)
}

func (c *Catalog) Garbage(ctx context.Context, server string, now time.Time, limit int) ([]shoal.Garbage, error) {
	return c.inner.Garbage(ctx, server, now, limit)
}

func (c *Catalog) DropGarbage(ctx context.Context, ids []int64) error {
	return c.inner.DropGarbage(ctx, ids)
}

func (c *Catalog) WalkReplicas(ctx context.Context, server string, fn func(path string, r shoal.Replica) error) error {
	return c.inner.WalkReplicas(ctx, server, fn)
}

func (c *Catalog) NamedObjects(ctx context.Context, server string, objects []string) ([]string, error) {
	return c.inner.NamedObjects(ctx, server, objects)
}

// Close closes the inner catalog.
func (c *Catalog) Close() error { return c.inner.Close() }

func (c *Catalog) RenewUploads(ctx context.Context, ids []string, until time.Time) error {
	return c.inner.RenewUploads(ctx, ids, until)
}
