// Package placement is md's view of the data servers and gws and the
// choices made from it: which servers get a new file (ForLayout, weighted
// by free space, on distinct hosts) and which replica or gw a read goes
// to (LiveReplicas, Gateways), from the server list in the catalog kept
// in memory, the heartbeats md takes (Heartbeat), the servers md could
// not reach (suspects, marked by its probes and failed requests), and
// md's own record of when its catalog failed (the outage clock, so that
// an outage does not age every server out).
//
// It must not import md, a catalog or cache implementation, or a server
// package (diskserver, gw, ec, jobs): it runs over a
// shoal.ServerRegistry and reaches servers only to probe them.
package placement

import (
	"context"
	"crypto/tls"
	"sync"
	"time"

	"shoal"
)

// Refresh bounds how stale md's view of the data servers is: a server
// that stops heartbeating stops getting writes within the server TTL plus
// this (and within a probe interval when the probes find it gone), and
// one marked draining within this (a drain waits it out:
// jobs.Env.PlacementStale).
const Refresh = time.Second

// refreshTimeout bounds one read of the server list: a catalog that hangs
// must not hold the requests that wait for a first list.
const refreshTimeout = 5 * time.Second

// View chooses data servers: live (heartbeat within ttl on md's catalog
// clock) and not suspect, active ones for writes, weighted by free space;
// any live one holding a replica for reads, suspect ones last. It keeps
// ServerRegistry.Servers in memory, read again every Refresh (by
// RefreshLoop, or by the first request that finds the list stale); while
// the catalog fails, requests are answered from the list in memory and
// never wait for a failing query. Safe for concurrent use.
type View struct {
	cat      shoal.ServerRegistry
	ttl      time.Duration
	clock    catalogClock
	suspects suspects
	written  heartbeatWrites
	peers    *peerCheck
	prober   *prober

	mu       sync.Mutex
	servers  []shoal.Server
	byID     map[string]*shoal.Server
	fetched  time.Time            // last read of the list, successful or not
	caughtUp time.Time            // last catch-up read (see catchUp)
	missing  map[string]time.Time // servers replicas named that a catch-up read did not list, and when
	gen      int                  // bumped by Invalidate
	inflight chan struct{}        // closed when the read in progress ends; nil if none
	lastErr  error
}

// New is the view of the servers of cat. A server is live if it
// heartbeated within ttl. peerTLS is the client config md reaches the
// servers with: when set, the cluster runs TLS and a heartbeat is taken
// only from a server whose URL is https and verifies (see Heartbeat).
func New(cat shoal.ServerRegistry, ttl time.Duration, peerTLS *tls.Config) *View {
	return &View{cat: cat, ttl: ttl, peers: newPeerCheck(peerTLS), prober: newProber(peerTLS)}
}

// List returns the server list, reading it again when stale. The returned
// map and slice must not be modified. Only a caller that finds no list at
// all (or the first to find it stale while the catalog works) waits for
// the catalog; the others get the list in memory.
func (p *View) List(ctx context.Context) ([]shoal.Server, map[string]*shoal.Server, error) {
	p.mu.Lock()
	if p.byID != nil {
		stale := time.Since(p.fetched) >= Refresh
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
	p.readLocked(ctx)
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

// readLocked reads the list, or waits for the read in progress (or ctx);
// p.mu is held on entry and released on return.
func (p *View) readLocked(ctx context.Context) {
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
}

// begin marks a read in progress; p.mu is held.
func (p *View) begin() chan struct{} {
	p.inflight = make(chan struct{})
	return p.inflight
}

// refresh reads the server list and installs it (a failed read keeps the
// old one: a stale list beats no list), then ends the read done.
func (p *View) refresh(ctx context.Context, done chan struct{}, gen int) {
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

// refreshNow reads the list unless a read is in progress (see
// RefreshLoop).
func (p *View) refreshNow(ctx context.Context) {
	p.mu.Lock()
	if p.inflight != nil || (p.byID != nil && time.Since(p.fetched) < Refresh/2) {
		p.mu.Unlock()
		return
	}
	done, gen := p.begin(), p.gen
	p.mu.Unlock()
	p.refresh(ctx, done, gen)
}

// RefreshLoop reads the server list every Refresh until stop is closed,
// whether or not requests come, so that md's catalog clock sees an
// outage (and its end) when it happens, and the probes have a current
// list.
func (p *View) RefreshLoop(ctx context.Context, stop <-chan struct{}) {
	t := time.NewTicker(Refresh)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			p.refreshNow(ctx)
		}
	}
}

// catchUpAfter bounds how often requests that the list cannot serve make
// md read it again: the catalog reads that replicas on servers removed
// for good, or a pool without room, can cause.
const catchUpAfter = 100 * time.Millisecond

// catchUp reads the server list again, unless the catalog is down or a
// catch-up read within catchUpAfter already answered the question, and
// says whether it did. A read that names servers the list lacks
// (missing), or a write that finds too few servers (none missing), asks
// for it: without it an md replica refused reads of files on a data
// server that registered through another md, and writes to it, until its
// next Refresh. The bound counts catch-up reads only, so that a periodic
// Refresh made just before a server registered does not put off the
// first request that needs it; and a read is put off only by a catch-up
// read that found its servers missing, so that servers removed for good
// do not put off a server that just came.
func (p *View) catchUp(ctx context.Context, missing []string) bool {
	now := time.Now()
	p.mu.Lock()
	if p.clock.down() || p.byID == nil || !p.mayCatchUpLocked(missing, now) {
		p.mu.Unlock()
		return false
	}
	p.caughtUp = now
	if done := p.inflight; done != nil {
		// A read begun before this request may have begun before the
		// server it needs registered: wait for it, then read anew.
		p.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
			return true
		}
		p.mu.Lock()
	}
	p.readLocked(ctx) // or wait for one another caller began since
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.missing == nil {
		p.missing = map[string]time.Time{}
	}
	for _, id := range missing {
		if p.byID[id] == nil {
			p.missing[id] = now
		} else {
			delete(p.missing, id)
		}
	}
	return true
}

// mayCatchUpLocked says whether a catch-up read for missing may run now.
func (p *View) mayCatchUpLocked(missing []string, now time.Time) bool {
	for id, at := range p.missing {
		if now.Sub(at) >= catchUpAfter {
			delete(p.missing, id)
		}
	}
	if len(missing) == 0 {
		return now.Sub(p.caughtUp) >= catchUpAfter
	}
	for _, id := range missing {
		if _, known := p.missing[id]; !known {
			return true
		}
	}
	return false
}

// Invalidate forces the next list to ask the catalog (after a heartbeat
// registers a new server, for instance).
func (p *View) Invalidate() {
	p.mu.Lock()
	p.byID = nil
	p.gen++
	p.mu.Unlock()
}

// live reports whether sv heartbeated within ttl, on md's catalog clock.
func (p *View) live(sv *shoal.Server, now time.Time) bool {
	return p.clock.age(sv.LastSeen, now) <= p.ttl
}

// usable reports whether sv is live and not suspect.
func (p *View) usable(sv *shoal.Server, now time.Time) bool {
	return p.live(sv, now) && !p.suspects.is(sv)
}

// MarkSuspect records that md could not reach server id (see suspects).
func (p *View) MarkSuspect(id string) {
	p.mu.Lock()
	sv := p.byID[id]
	p.mu.Unlock()
	if sv != nil {
		p.suspects.mark(sv)
	}
}
