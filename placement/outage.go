package placement

import (
	"sync"
	"time"

	"shoal"
)

// Where md learns that its catalog is failing.
const (
	srcServerList = 1 << iota // reading the server list (placement refresh)
	srcHeartbeat              // writing a data server's or gw's heartbeat
)

// maxOutages is how many finished outages the clock remembers: enough for
// a catalog that flaps several times within one ServerTTL.
const maxOutages = 16

// catalogClock is md's own record of when it could not use its catalog.
// A server's heartbeat age is measured on this clock: the time during
// which md could neither read the server list nor write heartbeats does
// not count, because no server could have heartbeated then. Without it a
// catalog outage longer than ServerTTL made every data server and gw look
// dead (their heartbeats failed) and md refused requests for a while
// after the catalog came back, and even during the outage for GETs it
// could have answered from memory.
//
// Each md keeps its own clock: an md replica that takes no heartbeats
// still sees the outage through its failing server-list reads, which it
// makes every Refresh whether or not requests come. A catalog
// that accepts reads but refuses writes is seen only by the md that takes
// the heartbeats. Dead servers are still found during an outage, by
// md's probes and failed requests (suspect marks), which need no catalog.
type catalogClock struct {
	mu      sync.Mutex
	failing uint8     // sources whose last attempt failed
	since   time.Time // start of the current outage, while failing != 0
	past    []outage  // finished outages, oldest first
}

type outage struct{ from, to time.Time }

// report records the outcome of one catalog call by source src: an error
// of KindUnavailable (the catalog could not be reached, or did not answer
// in time) is a failure; any other answer means the catalog works.
func (c *catalogClock) report(src uint8, err error, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	was := c.failing
	if shoal.IsKind(err, shoal.KindUnavailable) {
		c.failing |= src
	} else {
		c.failing &^= src
	}
	switch {
	case was == 0 && c.failing != 0:
		c.since = now
	case was != 0 && c.failing == 0:
		if len(c.past) == maxOutages {
			c.past = append(c.past[:0], c.past[1:]...)
		}
		c.past = append(c.past, outage{c.since, now})
	}
}

// down reports whether md's last attempt to read the server list or to
// write a heartbeat failed.
func (c *catalogClock) down() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failing != 0
}

// age is how long ago lastSeen was, leaving out the time md's catalog was
// failing.
func (c *catalogClock) age(lastSeen, now time.Time) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	a := now.Sub(lastSeen)
	if c.failing != 0 {
		a -= overlap(lastSeen, now, c.since, now)
	}
	for _, o := range c.past {
		a -= overlap(lastSeen, now, o.from, o.to)
	}
	return a
}

// overlap is the length of [a0, a1] ∩ [b0, b1].
func overlap(a0, a1, b0, b1 time.Time) time.Duration {
	lo, hi := a0, a1
	if b0.After(lo) {
		lo = b0
	}
	if b1.Before(hi) {
		hi = b1
	}
	if hi.After(lo) {
		return hi.Sub(lo)
	}
	return 0
}
