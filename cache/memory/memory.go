// Package memory is a shoal.Cache held in process memory: the byte tier
// for tests and for single-process use, with the same contract as the
// memcached tier (cache/memcache), proven by the same suite (cachetest).
//
// It imports only the root package, never md or the catalog.
package memory

import (
	"context"
	"sync"
	"time"

	"shoal"
)

// DefaultTTL applies when Set is given a ttl of 0.
const DefaultTTL = time.Hour

// DefaultMaxItems bounds the number of keys held; beyond it, Set evicts an
// arbitrary key.
const DefaultMaxItems = 1 << 20

// Cache is a map of keys to copies of values, with expiry.
type Cache struct {
	maxItems int
	mu       sync.Mutex
	items    map[string]item
}

type item struct {
	value   []byte
	expires time.Time
}

var _ shoal.Cache = (*Cache)(nil)

// New returns an empty cache holding at most maxItems keys
// (DefaultMaxItems if maxItems ≤ 0).
func New(maxItems int) *Cache {
	if maxItems <= 0 {
		maxItems = DefaultMaxItems
	}
	return &Cache{maxItems: maxItems, items: make(map[string]item)}
}

func (c *Cache) lookup(key string, now time.Time) ([]byte, bool) {
	it, ok := c.items[key]
	if !ok {
		return nil, false
	}
	if !now.Before(it.expires) {
		delete(c.items, key)
		return nil, false
	}
	return it.value, true
}

// Get returns a copy of the value of key, or KindNotFound.
func (c *Cache) Get(ctx context.Context, key string) ([]byte, error) {
	now := time.Now()
	c.mu.Lock()
	v, ok := c.lookup(key, now)
	c.mu.Unlock()
	if !ok {
		return nil, shoal.E("memory.Get", shoal.KindNotFound)
	}
	return append([]byte(nil), v...), nil
}

// GetMulti returns the values of the keys present (see cache.MultiGetter).
func (c *Cache) GetMulti(ctx context.Context, keys []string) (map[string][]byte, error) {
	now := time.Now()
	m := make(map[string][]byte, len(keys))
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range keys {
		if v, ok := c.lookup(k, now); ok {
			m[k] = append([]byte(nil), v...)
		}
	}
	return m, nil
}

// Set stores a copy of value for ttl (DefaultTTL if 0).
func (c *Cache) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	it := item{value: append([]byte(nil), value...), expires: time.Now().Add(ttl)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[key]; !ok && len(c.items) >= c.maxItems {
		for k := range c.items { // map iteration order: a random victim
			delete(c.items, k)
			break
		}
	}
	c.items[key] = it
	return nil
}

// SetMulti stores a copy of each value (see cache.MultiSetter).
func (c *Cache) SetMulti(ctx context.Context, keys []string, vals [][]byte, ttl time.Duration) error {
	if len(vals) != len(keys) {
		return shoal.Errorf("memory.SetMulti", shoal.KindInvalid, "%d values for %d keys", len(vals), len(keys))
	}
	for i, k := range keys {
		c.Set(ctx, k, vals[i], ttl)
	}
	return nil
}

// Delete removes key; a missing key is not an error.
func (c *Cache) Delete(ctx context.Context, key string) error {
	c.mu.Lock()
	delete(c.items, key)
	c.mu.Unlock()
	return nil
}
