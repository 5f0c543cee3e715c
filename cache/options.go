package cache

import (
	"context"
	"time"

	"shoal"
)

// Defaults for Options fields left zero.
const (
	DefaultL1Size      = 100_000          // entries held in process
	DefaultL1TTL       = 5 * time.Second  // bounds staleness against other md replicas
	DefaultL2TTL       = 5 * time.Minute  // positive answers in memcached
	DefaultNegativeTTL = 10 * time.Second // "no such path" answers, in both tiers
	DefaultKeyPrefix   = "shoal:"         // lets several namespaces share one memcached

	// genTTL is how long a generation stays in L2. Losing one early only
	// costs misses (see doc.go), so it is long.
	genTTL = 24 * time.Hour
)

// Options configure the caching decorator. The zero value caches nothing:
// every call goes to the inner catalog.
type Options struct {
	L1     bool          // keep an in-process tier in front
	L1Size int           // entries in the in-process tier (DefaultL1Size)
	L1TTL  time.Duration // lifetime of an in-process entry (DefaultL1TTL)

	L2          shoal.Cache   // shared tier, e.g. cache/memcache; nil for none
	L2TTL       time.Duration // lifetime of a positive answer in L2 (DefaultL2TTL)
	NegativeTTL time.Duration // lifetime of a negative answer, both tiers (DefaultNegativeTTL)
	KeyPrefix   string        // prefix of every L2 key (DefaultKeyPrefix)

	// SoleMD says this process is the only one that takes locks in the
	// catalog (shoal all over its embedded SQLite): that no live lock
	// exists is then known in process and not asked of the catalog for
	// every write (see locks.go).
	SoleMD bool
}

func (o Options) withDefaults() Options {
	if o.L1Size <= 0 {
		o.L1Size = DefaultL1Size
	}
	if o.L1TTL <= 0 {
		o.L1TTL = DefaultL1TTL
	}
	if o.L2TTL <= 0 {
		o.L2TTL = DefaultL2TTL
	}
	if o.NegativeTTL <= 0 {
		o.NegativeTTL = DefaultNegativeTTL
	}
	if o.KeyPrefix == "" {
		o.KeyPrefix = DefaultKeyPrefix
	}
	return o
}

// MultiGetter is an optional extra of a shoal.Cache: fetch several keys in
// one round trip per server. The decorator uses it when the L2 tier has
// it, and falls back to one Get per key.
type MultiGetter interface {
	// GetMulti returns the values of the keys that are present; a missing
	// key is simply absent from the map. An error means the result may be
	// incomplete and is treated as a miss of every key.
	GetMulti(ctx context.Context, keys []string) (map[string][]byte, error)
}

// IntoGetter is a cheaper MultiGetter: the values land in a slice the
// caller provides, by key index (nil for a missing key), with no map. The
// decorator prefers it (cache/memcache has it).
type IntoGetter interface {
	GetInto(ctx context.Context, keys []string, vals [][]byte) error
}

// MultiSetter is an optional extra of a shoal.Cache: store several keys
// in one round trip per server. A mutation's invalidation uses it when the
// L2 tier has it (cache/memcache), else one Set per key, in parallel.
type MultiSetter interface {
	// SetMulti stores vals[i] under keys[i] for at most ttl. An error
	// means any of them may not be stored.
	SetMulti(ctx context.Context, keys []string, vals [][]byte, ttl time.Duration) error
}

// getMulti uses c's GetMulti when it has one, else one Get per key.
func getMulti(ctx context.Context, c shoal.Cache, keys []string) (map[string][]byte, error) {
	if mg, ok := c.(MultiGetter); ok {
		return mg.GetMulti(ctx, keys)
	}
	m := make(map[string][]byte, len(keys))
	for _, k := range keys {
		v, err := c.Get(ctx, k)
		switch {
		case err == nil:
			m[k] = v
		case !shoal.IsKind(err, shoal.KindNotFound):
			return nil, err
		}
	}
	return m, nil
}
