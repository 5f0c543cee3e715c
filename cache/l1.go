package cache

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"
)

// l1 is the in-process tier: path → a cached answer (for Stat a shared,
// read-only *shoal.Entry or the negative error; for Props the dead
// properties), sharded to keep lock contention low.
// A hit takes one read lock and allocates nothing.
//
// Coherence within the process is exact (mutations through this decorator
// are never followed by a stale hit here); against other processes it is
// bounded by the TTL:
//   - a mutation of path p deletes p (and its parent) from their shards and
//     bumps the shard's generation, so a fill that read the catalog before
//     the mutation and lands after it is dropped (see token);
//   - a mutation that may replace a subtree (Remove, Move, Copy) bumps
//     epoch, which makes every slot filled before it stale: cheaper than a
//     scan of every shard for descendants, and such mutations are rare;
//   - a creation bumps negEpoch, which makes every negative slot stale
//     (paths below a new file turn from "not found" into "not a directory").
type l1[V any] struct {
	seed     maphash.Seed
	start    time.Time // expiries are monotonic nanoseconds since start
	ttl      int64
	negTTL   int64
	perShard int
	epoch    atomic.Uint64
	negEpoch atomic.Uint64
	shards   [l1Shards]l1Shard[V]
}

const l1Shards = 64

type l1Shard[V any] struct {
	mu    sync.RWMutex
	gen   atomic.Uint64 // written under mu; read without it for tokens
	slots map[string]l1Slot[V]
	_     [64]byte // keep neighbouring shards' locks off one cache line
}

type l1Slot[V any] struct {
	value    V
	err      error // the negative answer, if not nil
	expires  int64
	epoch    uint64
	negEpoch uint64
}

// l1Token is what a filler saw before it looked below L1; put drops the
// fill if the path was invalidated since.
type l1Token struct {
	gen, epoch, negEpoch uint64
}

func newL1[V any](size int, ttl, negTTL time.Duration) *l1[V] {
	c := &l1[V]{
		seed:     maphash.MakeSeed(),
		start:    time.Now(),
		ttl:      int64(ttl),
		negTTL:   int64(min(negTTL, ttl)),
		perShard: max(1, size/l1Shards),
	}
	for i := range c.shards {
		c.shards[i].slots = make(map[string]l1Slot[V])
	}
	return c
}

func (c *l1[V]) now() int64 { return int64(time.Since(c.start)) }

func (c *l1[V]) shard(path string) *l1Shard[V] {
	return &c.shards[maphash.String(c.seed, path)%l1Shards]
}

// get returns the cached answer for path, ok false on a miss.
func (c *l1[V]) get(path string) (V, error, bool) {
	s := c.shard(path)
	s.mu.RLock()
	slot, ok := s.slots[path]
	s.mu.RUnlock()
	if !ok || slot.expires <= c.now() || slot.epoch != c.epoch.Load() ||
		(slot.err != nil && slot.negEpoch != c.negEpoch.Load()) {
		var zero V
		return zero, nil, false
	}
	return slot.value, slot.err, true
}

func (c *l1[V]) token(path string) l1Token {
	return l1Token{gen: c.shard(path).gen.Load(), epoch: c.epoch.Load(), negEpoch: c.negEpoch.Load()}
}

// put stores an answer unless path was invalidated since tok was taken.
func (c *l1[V]) put(path string, tok l1Token, v V, negErr error) {
	ttl := c.ttl
	if negErr != nil {
		ttl = c.negTTL
	}
	slot := l1Slot[V]{value: v, err: negErr, expires: c.now() + ttl, epoch: tok.epoch, negEpoch: tok.negEpoch}
	s := c.shard(path)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gen.Load() != tok.gen {
		return
	}
	if _, ok := s.slots[path]; !ok && len(s.slots) >= c.perShard {
		for k := range s.slots { // map iteration order: a random victim
			delete(s.slots, k)
			break
		}
	}
	s.slots[path] = slot
}

// forget drops path and fails fills of it that are in flight.
func (c *l1[V]) forget(path string) {
	s := c.shard(path)
	s.mu.Lock()
	s.gen.Add(1)
	delete(s.slots, path)
	s.mu.Unlock()
}
