package placement

import (
	"context"
	"sync"
	"time"

	"shoal"
)

// heartbeatWrites remembers when this md last wrote each server's
// heartbeat to the catalog. Every write is a durable catalog commit (an
// fsync with SQLite): servers that heartbeat often would otherwise make
// the catalog's writer the bottleneck, and heartbeats queued behind each
// other age their servers out. md writes a server's heartbeat at most
// every ttl/6 while nothing md decides on changed; the heartbeats in
// between only tell this md that the server is alive (they clear a
// suspect mark).
type heartbeatWrites struct {
	mu sync.Mutex
	at map[string]time.Time
}

// Heartbeat takes a heartbeat of a data server or gw: hb says its ID,
// URL, Pool, Free and Total. A new server is registered active, a known
// one keeps its state; renew (called once the server's row is written)
// renews the uploads it reported. With peer TLS, a server whose URL is
// not https or does not verify against the cluster CA is refused
// (KindPermission), so it never becomes live. Otherwise the error is the
// catalog's (a heartbeat that cannot be written stops md's catalog clock,
// see catalogClock).
func (p *View) Heartbeat(ctx context.Context, hb *shoal.Server, renew func() error) error {
	if err := p.peers.verify(ctx, hb.URL); err != nil {
		return shoal.Errorf("heartbeat", shoal.KindPermission, "%s", err.Error())
	}
	_, known, _ := p.List(ctx)
	old := known[hb.ID]
	now := time.Now()
	// A heartbeat skipped renews no upload either: the next one written
	// (within ttl/6) does, long before a reservation expires.
	if p.skipHeartbeat(hb, old, now, p.ttl/6) {
		p.suspects.clear(hb.ID)
		return nil
	}
	sv := *hb
	sv.State, sv.LastSeen = shoal.ServerActive, now
	if old != nil && old.State != "" {
		sv.State = old.State
	}
	err := p.cat.PutServer(ctx, &sv)
	if err == nil {
		err = renew()
	}
	// md's catalog clock stops while heartbeats cannot be written (see
	// catalogClock): the servers are not aged out for md's own outage.
	p.clock.report(srcHeartbeat, err, time.Now())
	if err != nil {
		return err
	}
	p.wroteHeartbeat(hb.ID, now)
	p.suspects.clear(hb.ID)
	// A new server takes writes at once; one that moved (restarted on a new
	// URL), changed pool or came back from the dead must not be served
	// from the stale list until its next refresh.
	if old == nil || old.URL != hb.URL || old.Pool != hb.Pool || !p.live(old, time.Now()) {
		p.Invalidate()
	}
	return nil
}

// skipHeartbeat reports whether the heartbeat hb need not be written:
// md wrote one of the same server, URL, pool and size within every, the
// server did not fill up or get room since, and the catalog's row (old,
// from md's list) is still live.
func (p *View) skipHeartbeat(hb *shoal.Server, old *shoal.Server, now time.Time, every time.Duration) bool {
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
func (p *View) wroteHeartbeat(id string, now time.Time) {
	h := &p.written
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.at == nil {
		h.at = map[string]time.Time{}
	}
	h.at[id] = now
}
