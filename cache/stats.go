package cache

import "sync/atomic"

// TierStats counts lookups in one tier. Errors are lookups that failed or
// were skipped by an open circuit breaker (and were served from below);
// they are not counted as misses too.
type TierStats struct {
	Hits, Misses, Errors uint64
}

// Stats is a snapshot of the decorator's counters.
type Stats struct {
	L1, L2 TierStats
	// Props counts dead-property lookups in L2 (props.go).
	Props TierStats
	// Inner counts Stat calls that reached the inner catalog.
	Inner uint64
	// InvalidationErrors counts L2 invalidations that failed: each may
	// leave other md replicas stale for up to the L2 TTL (see doc.go).
	InvalidationErrors uint64
}

type tierCounters struct {
	hits, misses, errors atomic.Uint64
}

func (t *tierCounters) snapshot() TierStats {
	return TierStats{Hits: t.hits.Load(), Misses: t.misses.Load(), Errors: t.errors.Load()}
}

type counters struct {
	l1, l2, props      tierCounters
	inner              atomic.Uint64
	invalidationErrors atomic.Uint64
}

// Stats returns the current counters.
func (c *Catalog) Stats() Stats {
	return Stats{
		L1:                 c.counters.l1.snapshot(),
		L2:                 c.counters.l2.snapshot(),
		Props:              c.counters.props.snapshot(),
		Inner:              c.counters.inner.Load(),
		InvalidationErrors: c.counters.invalidationErrors.Load(),
	}
}
