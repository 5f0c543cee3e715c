package token

import (
	"hash/maphash"
	"sync"

	"shoal"
)

const cacheShards = 16

// cache holds verified tokens so that a token seen again costs a hash, a
// map lookup and a compare: no parsing, no signature check, no allocation.
//
// It is keyed by maphash (a fast, per-process seeded hash, not a
// collision-resistant one), so each entry keeps the token itself and a hit
// requires the bytes to be equal: two tokens that collide simply evict each
// other. The token stays in memory only as long as it would be accepted
// anyway (until the earlier of its exp and the cache TTL); SHA-256 per
// request would cost microseconds on a Pi without crypto extensions.
type cache struct {
	seed   maphash.Seed
	max    int // entries per shard
	shards [cacheShards]cacheShard
}

type cacheShard struct {
	mu sync.RWMutex
	m  map[uint64]*cached
}

type cached struct {
	raw   string
	p     *shoal.Principal
	until int64 // unix nanoseconds: the earlier of exp and now + TTL
}

func newCache(entries int) *cache {
	c := &cache{seed: maphash.MakeSeed(), max: max(1, entries/cacheShards)}
	for i := range c.shards {
		c.shards[i].m = make(map[uint64]*cached)
	}
	return c
}

func (c *cache) get(raw []byte, now int64) *shoal.Principal {
	h := maphash.Bytes(c.seed, raw)
	s := &c.shards[h%cacheShards]
	s.mu.RLock()
	e := s.m[h]
	s.mu.RUnlock()
	if e == nil || now >= e.until || e.raw != string(raw) {
		return nil
	}
	return e.p
}

func (c *cache) put(raw []byte, p *shoal.Principal, until, now int64) {
	h := maphash.Bytes(c.seed, raw)
	s := &c.shards[h%cacheShards]
	e := &cached{raw: string(raw), p: p, until: until}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.m) >= c.max {
		// Full: drop the expired, then, if still full, any one entry (map
		// order is random enough to not be gamed into a pattern).
		for k, old := range s.m {
			if now >= old.until {
				delete(s.m, k)
			}
		}
		for k := range s.m {
			if len(s.m) < c.max {
				break
			}
			delete(s.m, k)
		}
	}
	s.m[h] = e
}

// len is the number of entries (tests).
func (c *cache) len() int {
	n := 0
	for i := range c.shards {
		c.shards[i].mu.RLock()
		n += len(c.shards[i].m)
		c.shards[i].mu.RUnlock()
	}
	return n
}
