package md

import (
	"sync"
	"time"

	"shoal"
	"shoal/wire"
)

// heartbeatWrites remembers when this md last wrote each server's
// heartbeat to the catalog. Every write is a durable catalog commit (an
// fsync with SQLite): servers that heartbeat often would otherwise make
// the catalog's writer the bottleneck, and heartbeats queued behind each
// other age their servers out. md writes a server's heartbeat at most
// every ServerTTL/6 while nothing md decides on changed; the heartbeats
// in between only tell this md that the server is alive (they clear a
// suspect mark).
type heartbeatWrites struct {
	mu sync.Mutex
	at map[string]time.Time
}

// skipHeartbeat reports whether the heartbeat hb need not be written:
// md wrote one of the same server, URL, pool and size within every, the
// server did not fill up or get room since, and the catalog's row (old,
// from md's list) is still live.
func (p *placement) skipHeartbeat(hb *wire.Heartbeat, old *shoal.Server, now time.Time, every time.Duration) bool {
	if old == nil || old.URL != hb.URL || old.Pool != hb.Pool || old.Total != hb.Total ||
		(old.Free > 0) != (hb.Free > 0) || !p.live(old, now) {
		return false
	}
	h := &p.written
	h.mu.Lock()
	defer h.mu.Unlock()
	at, ok := h.at[hb.ID]
	return ok && now.Sub(at) < every
}

// wroteHeartbeat records that md wrote id's heartbeat at now.
func (p *placement) wroteHeartbeat(id string, now time.Time) {
	h := &p.written
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.at == nil {
		h.at = map[string]time.Time{}
	}
	h.at[id] = now
}
