package cache

import (
	"sync/atomic"
	"time"
)

// absence is a fact "nothing of some kind exists in the catalog" (no live
// lock, no directory mapped to a pool) that a SoleMD process keeps, since
// only it can make one: learned from a count, dropped by every change that
// may add one, once that change has committed and before it is answered.
//
// state is gen<<1 | known. drop bumps gen and clears known; learn sets
// known only if gen did not move since the caller took its snapshot
// (before it read anything), so a count that raced a change is never
// kept. The fact holds from the instant of the count that found none
// (at): a question about an earlier instant (the clock stepped back) is
// asked of the catalog.
type absence struct {
	state     atomic.Uint64
	at        atomic.Int64 // unix ns of the count that found none
	lastFound atomic.Int64 // unix ns of the last count that found some
}

// recountEvery bounds how often, while some exist, a caller also counts
// them to learn that they are all gone.
const recountEvery = time.Second

func (a *absence) known(now time.Time) bool {
	return a != nil && a.state.Load()&1 == 1 && now.UnixNano() >= a.at.Load()
}

// drop forgets the absence (nil-safe: called whether or not it is kept).
func (a *absence) drop() {
	if a == nil {
		return
	}
	for {
		s := a.state.Load()
		if a.state.CompareAndSwap(s, (s>>1+1)<<1) {
			return
		}
	}
}

// snapshot is the generation a caller reads under.
func (a *absence) snapshot() uint64 { return a.state.Load() >> 1 }

// due reports whether a count is worth making: none found some in the
// last recountEvery.
func (a *absence) due(now time.Time) bool {
	last := a.lastFound.Load()
	return now.UnixNano()-last >= int64(recountEvery) || now.UnixNano() < last
}

// learn records the outcome of a count made at now under the generation
// gen: none (n == 0) is kept unless a change came meanwhile.
func (a *absence) learn(gen uint64, now time.Time, n int) {
	if n > 0 {
		a.lastFound.Store(now.UnixNano())
		return
	}
	a.at.Store(now.UnixNano())
	a.state.CompareAndSwap(gen<<1, gen<<1|1)
}
