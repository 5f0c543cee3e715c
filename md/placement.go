package md

import (
	"context"
	"sync"
	"time"

	"shoal"
)

// PlacementRefresh bounds how stale md's view of the data servers is: a
// server that stops heartbeating stops getting writes within ServerTTL
// plus this, and one marked draining within this (a drain waits it out:
// jobs.Env.PlacementStale).
const PlacementRefresh = time.Second

// placement chooses data servers: live (heartbeat within ttl), active ones
// for writes, weighted by free space; any live one holding a replica for
// reads. It caches Catalog.Servers for PlacementRefresh.
type placement struct {
	cat shoal.ServerRegistry
	ttl time.Duration

	mu      sync.Mutex
	servers []shoal.Server
	byID    map[string]*shoal.Server
	fetched time.Time
}

func newPlacement(cat shoal.ServerRegistry, ttl time.Duration) *placement {
	return &placement{cat: cat, ttl: ttl}
}

// list returns the cached server list, refreshing it when stale. The
// returned map and slice must not be modified.
func (p *placement) list(ctx context.Context) ([]shoal.Server, map[string]*shoal.Server, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.byID != nil && time.Since(p.fetched) < PlacementRefresh {
		return p.servers, p.byID, nil
	}
	servers, err := p.cat.Servers(ctx)
	if err != nil {
		if p.byID != nil {
			return p.servers, p.byID, nil // a stale list beats no list
		}
		return nil, nil, err
	}
	byID := make(map[string]*shoal.Server, len(servers))
	for i := range servers {
		byID[servers[i].ID] = &servers[i]
	}
	p.servers, p.byID, p.fetched = servers, byID, time.Now()
	return servers, byID, nil
}

// invalidate forces the next list to ask the catalog (after a heartbeat
// registers a new server, for instance).
func (p *placement) invalidate() {
	p.mu.Lock()
	p.byID = nil
	p.mu.Unlock()
}

// quotaAvailable is the free space of live active servers (RFC 4331
// quota-available-bytes).
func (p *placement) quotaAvailable(ctx context.Context) (int64, error) {
	servers, _, err := p.list(ctx)
	if err != nil {
		return 0, err
	}
	now := time.Now()
	var free int64
	for i := range servers {
		if servers[i].State == shoal.ServerActive && servers[i].Live(now, p.ttl) {
			free += servers[i].Free
		}
	}
	return free, nil
}
