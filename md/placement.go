package md

import (
	"context"
	"sync"
	"time"

	"shoal"
)

// PlacementRefresh bounds how stale md's view of the data servers is: a
// server that stops heartbeating stops getting writes within ServerTTL
// plus this (and within a probe interval when md's probes find it gone),
// and one marked draining within this (a drain waits it out:
// jobs.Env.PlacementStale).
const PlacementRefresh = time.Second

// refreshTimeout bounds one read of the server list: a catalog that hangs
// must not hold the requests that wait for a first list.
const refreshTimeout = 5 * time.Second

// placement chooses data servers: live (heartbeat within ttl on md's
// catalog clock) and not suspect, active ones for writes, weighted by free
// space; any live one holding a replica for reads, suspect ones last. It
// keeps Catalog.Servers in memory, read again every PlacementRefresh (by
// md's refresh loop, or by the first request that finds the list stale);
// while the catalog fails, requests are answered from the list in memory
// and never wait for a failing query.
type placement struct {
	cat      shoal.ServerRegistry
	ttl      time.Duration
	clock    catalogClock
	suspects suspects
	written  heartbeatWrites

	mu       sync.Mutex
	servers  []shoal.Server
	byID     map[string]*shoal.Server
	fetched  time.Time     // last read of the list, successful or not
	gen      int           // bumped by invalidate
	inflight chan struct{} // closed when the read in progress ends; nil if none
	lastErr  error
}

func newPlacement(cat shoal.ServerRegistry, ttl time.Duration) *placement {
	return &placement{cat: cat, ttl: ttl}
}

// list returns the server list, reading it again when stale. The returned
// map and slice must not be modified. Only a caller that finds no list at
// all (or the first to find it stale while the catalog works) waits for
// the catalog; the others get the list in memory.
func (p *placement) list(ctx context.Context) ([]shoal.Server, map[string]*shoal.Server, error) {
	p.mu.Lock()
	if p.byID != nil {
		stale := time.Since(p.fetched) >= PlacementRefresh
		if !stale || p.inflight != nil {
			defer p.mu.Unlock()
			return p.servers, p.byID, nil
		}
		if p.clock.down() {
			done := p.begin()
			go p.refresh(context.Background(), done, p.gen)
			defer p.mu.Unlock()
			return p.servers, p.byID, nil
		}
	}
	done := p.inflight
	if done == nil {
		done = p.begin()
		gen := p.gen
		p.mu.Unlock()
		p.refresh(ctx, done, gen)
	} else {
		p.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.byID == nil {
		if p.lastErr == nil {
			return nil, nil, shoal.E("placement", shoal.KindUnavailable, ctx.Err())
		}
		return nil, nil, p.lastErr
	}
	return p.servers, p.byID, nil
}

// begin marks a read in progress; p.mu is held.
func (p *placement) begin() chan struct{} {
	p.inflight = make(chan struct{})
	return p.inflight
}

// refresh reads the server list and installs it (a failed read keeps the
// old one: a stale list beats no list), then ends the read done.
func (p *placement) refresh(ctx context.Context, done chan struct{}, gen int) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refreshTimeout)
	servers, err := p.cat.Servers(ctx)
	cancel()
	now := time.Now()
	p.clock.report(srcServerList, err, now)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inflight = nil
	close(done)
	p.fetched, p.lastErr = now, err
	if err != nil {
		return
	}
	byID := make(map[string]*shoal.Server, len(servers))
	for i := range servers {
		byID[servers[i].ID] = &servers[i]
	}
	p.servers, p.byID = servers, byID
	if gen != p.gen { // invalidated while reading: the next list reads again
		p.fetched = time.Time{}
	}
}

// refreshNow reads the list unless a read is in progress: md's refresh
// loop calls it every PlacementRefresh, so that md notices a catalog
// outage (and its end) even when no request comes.
func (p *placement) refreshNow(ctx context.Context) {
	p.mu.Lock()
	if p.inflight != nil || (p.byID != nil && time.Since(p.fetched) < PlacementRefresh/2) {
		p.mu.Unlock()
		return
	}
	done, gen := p.begin(), p.gen
	p.mu.Unlock()
	p.refresh(ctx, done, gen)
}

// invalidate forces the next list to ask the catalog (after a heartbeat
// registers a new server, for instance).
func (p *placement) invalidate() {
	p.mu.Lock()
	p.byID = nil
	p.gen++
	p.mu.Unlock()
}

// live reports whether sv heartbeated within ttl, on md's catalog clock.
func (p *placement) live(sv *shoal.Server, now time.Time) bool {
	return p.clock.age(sv.LastSeen, now) <= p.ttl
}

// usable reports whether sv is live and not suspect.
func (p *placement) usable(sv *shoal.Server, now time.Time) bool {
	return p.live(sv, now) && !p.suspects.is(sv)
}

// markSuspect records that md could not reach server id (see suspects).
func (p *placement) markSuspect(id string) {
	p.mu.Lock()
	sv := p.byID[id]
	p.mu.Unlock()
	if sv != nil {
		p.suspects.mark(sv)
	}
}
