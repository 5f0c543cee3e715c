package gw

import (
	"context"
	"sync"
	"time"

	"shoal"
	"shoal/ec"
	"shoal/wire"
)

// DefaultRefresh is how often the server list is fetched from md.
const DefaultRefresh = 3 * time.Second

// directory maps data-server ids to clients: a static map from Options
// and, with an md, md's server list refreshed every few seconds (and at
// once when an unknown id is asked for, at most once a second).
type directory struct {
	md     *wire.Client // nil: static only
	static map[string]string
	dial   func(url string) shoal.BlobStore

	mu      sync.Mutex
	urls    map[string]string          // id → URL from md
	clients map[string]shoal.BlobStore // URL → client
	fetched time.Time
}

func (d *directory) refresh() error {
	if d.md == nil {
		return nil
	}
	var list []shoal.Server
	if _, err := d.md.Call(wire.PathAdminServers, struct{}{}, &list); err != nil {
		return err
	}
	urls := make(map[string]string, len(list))
	for _, s := range list {
		if s.State != shoal.ServerRetired {
			urls[s.ID] = s.URL
		}
	}
	d.mu.Lock()
	d.urls, d.fetched = urls, time.Now()
	d.mu.Unlock()
	return nil
}

func (d *directory) loop(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			d.refresh()
		}
	}
}

func (d *directory) lookup(id string) (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if u, ok := d.static[id]; ok {
		return u, true
	}
	u, ok := d.urls[id]
	return u, ok
}

// stores returns the shard stores for the given server ids, in order; an
// empty id is a shard a degraded write left out (Absent). An unknown
// id is KindUnavailable (md knows a server gw has not heard of yet, or
// one that is gone).
func (d *directory) stores(ids []string) ([]shoal.BlobStore, error) {
	out := make([]shoal.BlobStore, len(ids))
	for i, id := range ids {
		if id == "" {
			out[i] = ec.Absent{}
			continue
		}
		u, ok := d.lookup(id)
		if !ok {
			// A server md learnt of since the last fetch (one that just
			// started): fetch again, at most once a second — waiting for
			// that second rather than failing a request.
			d.mu.Lock()
			wait := time.Second - time.Since(d.fetched)
			d.mu.Unlock()
			if wait > 0 {
				time.Sleep(wait)
			}
			if d.refresh() == nil {
				u, ok = d.lookup(id)
			}
		}
		if !ok {
			return nil, shoal.Errorf("gw.servers", shoal.KindUnavailable, "unknown data server %q", id)
		}
		d.mu.Lock()
		c := d.clients[u]
		if c == nil {
			c = d.dial(u)
			d.clients[u] = c
		}
		d.mu.Unlock()
		out[i] = c
	}
	return out, nil
}

// storeFor is the erasure-coded or replicated store a signed gw request
// names: its layout over its servers' stores.
func (s *Server) storeFor(req wire.GatewayRequest) (ec.LayoutStore, error) {
	shards, err := s.dir.stores(req.Servers)
	if err != nil {
		return nil, err
	}
	return ec.ForLayout(req.Layout, s.opts.StripeSize, shards)
}
