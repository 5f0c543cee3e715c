package md

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"shoal"
)

// placementRefresh bounds how stale md's view of the data servers is: a
// server that stops heartbeating stops getting writes within ServerTTL
// plus this.
const placementRefresh = time.Second

// placement chooses data servers: live (heartbeat within ttl), active ones
// for writes, weighted by free space; any live one holding a replica for
// reads. It caches Catalog.Servers for placementRefresh.
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
	if p.byID != nil && time.Since(p.fetched) < placementRefresh {
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

// forWrite picks one live active server, weighted by free space.
// KindInsufficient if there is none.
func (p *placement) forWrite(ctx context.Context) (*shoal.Server, error) {
	servers, _, err := p.list(ctx)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	var total float64
	var live []*shoal.Server
	for i := range servers {
		sv := &servers[i]
		if sv.State == shoal.ServerActive && sv.Live(now, p.ttl) && sv.Free > 0 {
			live = append(live, sv)
			total += float64(sv.Free)
		}
	}
	if len(live) == 0 {
		return nil, shoal.Errorf("placement", shoal.KindInsufficient, "no live data server with free space")
	}
	r := rand.Float64() * total
	for _, sv := range live {
		r -= float64(sv.Free)
		if r < 0 {
			return sv, nil
		}
	}
	return live[len(live)-1], nil
}

// forRead picks a random replica of e on a live server that is not
// retired. KindUnavailable if none is live.
func (p *placement) forRead(ctx context.Context, e *shoal.Entry) (*shoal.Server, shoal.Replica, error) {
	_, byID, err := p.list(ctx)
	if err != nil {
		return nil, shoal.Replica{}, err
	}
	now := time.Now()
	n := len(e.Replicas)
	if n == 0 {
		return nil, shoal.Replica{}, shoal.Errorf("placement", shoal.KindCorrupt, "file has no replicas")
	}
	start := rand.IntN(n)
	for i := 0; i < n; i++ {
		r := e.Replicas[(start+i)%n]
		sv := byID[r.Server]
		if sv != nil && sv.State != shoal.ServerRetired && sv.Live(now, p.ttl) {
			return sv, r, nil
		}
	}
	return nil, shoal.Replica{}, shoal.Errorf("placement", shoal.KindUnavailable, "no live data server holds this file")
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
