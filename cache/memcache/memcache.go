// Package memcache is the shared cache tier: a shoal.Cache over one or
// more memcached servers (github.com/bradfitz/gomemcache; keys are spread
// over the servers by its ServerList).
//
// memcached is an accelerator, never a dependency: every operation has a
// bounded timeout, and after BreakerThreshold consecutive failures reads
// skip memcached altogether for BreakerBackoff, so a dead or slow server
// costs one timeout per backoff period instead of one per request. After
// the backoff, the next read tries again and, if it works, closes the
// breaker. Writes (Set, Delete) are always attempted: they carry the
// invalidations that keep other md replicas coherent, and dropping one
// because of this process's breaker could leave them stale.
//
// It imports only the root package and gomemcache, never md or the catalog.
package memcache

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/bradfitz/gomemcache/memcache"

	"shoal"
)

// Defaults for Options fields left zero.
const (
	DefaultTimeout          = 100 * time.Millisecond
	DefaultMaxIdleConns     = 64 // per server: idle connections kept for concurrent requests
	DefaultBreakerThreshold = 3
	DefaultBreakerBackoff   = time.Second
	DefaultTTL              = time.Hour // for Set with ttl 0
)

// Options configure a Cache.
type Options struct {
	Servers          []string      // host:port of each memcached
	Timeout          time.Duration // per network operation (DefaultTimeout)
	MaxIdleConns     int           // per server (DefaultMaxIdleConns)
	BreakerThreshold int           // consecutive failures that open the breaker
	BreakerBackoff   time.Duration // how long an open breaker skips reads
}

// Cache is a shoal.Cache over memcached.
type Cache struct {
	mc      *memcache.Client
	breaker breaker
	// servers, raw and timeout serve GetInto and SetMulti, the hot read
	// and invalidation paths (getinto.go, setmulti.go); gomemcache serves
	// the rest.
	servers *memcache.ServerList
	raw     []*rawPool // one per server, in ServerList order
	timeout time.Duration
}

var _ shoal.Cache = (*Cache)(nil)

// New returns a Cache over opts.Servers. It does not connect: a server
// that is down is a miss, not an error here.
func New(opts Options) (*Cache, error) {
	if len(opts.Servers) == 0 {
		return nil, shoal.Errorf("memcache.New", shoal.KindInvalid, "no memcached servers")
	}
	ss := new(memcache.ServerList)
	if err := ss.SetServers(opts.Servers...); err != nil {
		return nil, shoal.E("memcache.New", shoal.KindInvalid, err)
	}
	mc := memcache.NewFromSelector(ss)
	mc.Timeout = cmp(opts.Timeout, DefaultTimeout)
	mc.MaxIdleConns = cmp(opts.MaxIdleConns, DefaultMaxIdleConns)
	c := &Cache{mc: mc, servers: ss, timeout: mc.Timeout}
	ss.Each(func(a net.Addr) error {
		c.raw = append(c.raw, &rawPool{addr: a, maxIdle: mc.MaxIdleConns})
		return nil
	})
	if len(c.raw) > 255 {
		return nil, shoal.Errorf("memcache.New", shoal.KindInvalid, "%d memcached servers: at most 255", len(c.raw))
	}
	c.breaker.threshold = int64(cmp(opts.BreakerThreshold, DefaultBreakerThreshold))
	c.breaker.backoff = cmp(opts.BreakerBackoff, DefaultBreakerBackoff)
	return c, nil
}

func cmp[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Close closes idle connections.
func (c *Cache) Close() error {
	for _, p := range c.raw {
		p.close()
	}
	return c.mc.Close()
}

var errOpen = errors.New("memcached skipped after repeated failures")

// Get returns the value of key, KindNotFound on a miss, KindUnavailable if
// memcached failed or the breaker is open.
func (c *Cache) Get(ctx context.Context, key string) ([]byte, error) {
	const op = "memcache.Get"
	if !c.breaker.allow() {
		return nil, shoal.E(op, shoal.KindUnavailable, errOpen)
	}
	it, err := c.mc.Get(key)
	if err == memcache.ErrCacheMiss {
		c.breaker.success()
		return nil, shoal.E(op, shoal.KindNotFound)
	}
	if err != nil {
		return nil, c.fail(op, err)
	}
	c.breaker.success()
	return it.Value, nil
}

// GetMulti fetches keys with one request per server, sent in parallel
// (see cache.MultiGetter).
func (c *Cache) GetMulti(ctx context.Context, keys []string) (map[string][]byte, error) {
	const op = "memcache.GetMulti"
	if !c.breaker.allow() {
		return nil, shoal.E(op, shoal.KindUnavailable, errOpen)
	}
	items, err := c.mc.GetMulti(keys)
	if err != nil {
		return nil, c.fail(op, err)
	}
	c.breaker.success()
	m := make(map[string][]byte, len(items))
	for k, it := range items {
		m[k] = it.Value
	}
	return m, nil
}

// Set stores value under key for ttl, rounded up to whole seconds as
// memcached counts them (DefaultTTL if 0).
func (c *Cache) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	secs := int32((ttl + time.Second - 1) / time.Second)
	if err := c.mc.Set(&memcache.Item{Key: key, Value: value, Expiration: secs}); err != nil {
		return c.fail("memcache.Set", err)
	}
	c.breaker.success()
	return nil
}

// Delete removes key; a missing key is not an error.
func (c *Cache) Delete(ctx context.Context, key string) error {
	err := c.mc.Delete(key)
	if err != nil && err != memcache.ErrCacheMiss {
		return c.fail("memcache.Delete", err)
	}
	c.breaker.success()
	return nil
}

// fail classifies err; failures of memcached (not of the request) count
// towards opening the breaker.
func (c *Cache) fail(op string, err error) error {
	if errors.Is(err, memcache.ErrMalformedKey) {
		return shoal.E(op, shoal.KindInvalid, err)
	}
	c.breaker.failure()
	return shoal.E(op, shoal.KindUnavailable, err)
}
