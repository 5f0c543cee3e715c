package md

import (
	"context"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/wire"
)

// needsGateway reports whether writes of l go through a gw: every EC
// layout, and replica:N with N > 1 (the gw writes the N copies in parallel
// and commits once all are durable). replica:1 goes straight to a data
// server.
func needsGateway(l shoal.Layout) bool {
	return l.Kind == shoal.LayoutEC || l.N > 1
}

// poolFor is the pool and layout a new file at path gets.
func (s *Server) poolFor(ctx context.Context, path string) (shoal.Pool, error) {
	p, err := s.cat.PoolFor(ctx, path)
	if err != nil {
		return shoal.Pool{}, err
	}
	if p.Layout.IsZero() {
		p.Layout = shoal.DefaultLayout
	}
	return p, nil
}

// hostOf is the host part of a server URL (distinct hosts are preferred
// for the servers of one file).
func hostOf(u string) string {
	if pu, err := url.Parse(u); err == nil && pu.Hostname() != "" {
		return pu.Hostname()
	}
	return u
}

// forLayout picks Width distinct live active data servers of the pool with
// free space, weighted by free space, on distinct hosts when there are
// enough of them; servers[i] holds replica or shard i. KindInsufficient,
// naming what is missing, if the pool has too few — unless degraded and
// the layout is ec:K+M with at least K+1 of them: then it picks them all
// (fewer than Width; the parity shards past them are left out).
func (p *placement) forLayout(ctx context.Context, pool shoal.Pool, degraded bool) ([]*shoal.Server, error) {
	servers, _, err := p.list(ctx)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	var cands []*shoal.Server
	for i := range servers {
		sv := &servers[i]
		if sv.Pool == pool.Name && sv.State == shoal.ServerActive && sv.Live(now, p.ttl) && sv.Free > 0 {
			cands = append(cands, sv)
		}
	}
	w := pool.Layout.Width()
	if len(cands) < w {
		if !degraded || pool.Layout.Kind != shoal.LayoutEC {
			return nil, shoal.Errorf("placement", shoal.KindInsufficient,
				"not enough servers in pool %s for %s: needs %d live active data servers with free space, has %d (no live data server for the rest)",
				pool.Name, pool.Layout, w, len(cands))
		}
		if min := pool.Layout.K + 1; len(cands) < min {
			return nil, shoal.Errorf("placement", shoal.KindInsufficient,
				"not enough servers in pool %s for %s even degraded: needs at least %d live active data servers with free space (K data shards and one parity), has %d",
				pool.Name, pool.Layout, min, len(cands))
		}
		w = len(cands)
	}
	chosen := make([]*shoal.Server, 0, w)
	taken := map[*shoal.Server]bool{}
	hosts := map[string]bool{}
	for len(chosen) < w {
		var from []*shoal.Server
		for _, sv := range cands {
			if !taken[sv] && !hosts[hostOf(sv.URL)] {
				from = append(from, sv)
			}
		}
		if len(from) == 0 { // fewer hosts than the layout's width
			for _, sv := range cands {
				if !taken[sv] {
					from = append(from, sv)
				}
			}
		}
		sv := weighted(from)
		taken[sv], hosts[hostOf(sv.URL)] = true, true
		chosen = append(chosen, sv)
	}
	return chosen, nil
}

// weighted picks one server at random, weighted by free space.
func weighted(from []*shoal.Server) *shoal.Server {
	var total float64
	for _, sv := range from {
		total += float64(sv.Free)
	}
	r := rand.Float64() * total
	for _, sv := range from {
		r -= float64(sv.Free)
		if r < 0 {
			return sv
		}
	}
	return from[len(from)-1]
}

// gateway picks a live gw at random. KindUnavailable if there is none.
func (p *placement) gateway(ctx context.Context, l shoal.Layout) (*shoal.Server, error) {
	servers, _, err := p.list(ctx)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	var live []*shoal.Server
	for i := range servers {
		sv := &servers[i]
		if sv.Pool == shoal.GatewayPool && sv.State != shoal.ServerRetired && sv.Live(now, p.ttl) {
			live = append(live, sv)
		}
	}
	if len(live) == 0 {
		return nil, shoal.Errorf("placement", shoal.KindUnavailable, "no live gw (pool %s) to serve %s", shoal.GatewayPool, l)
	}
	return live[rand.IntN(len(live))], nil
}

// reserve picks the servers of the file's layout (and a gw when the
// layout needs one), records the upload and returns the signed PUT URL the
// body goes to: a data server's for replica:1, a gw's otherwise.
func (s *Server) reserve(ctx context.Context, p *putPlan) (string, error) {
	pool, err := s.poolFor(ctx, p.path)
	if err != nil {
		return "", err
	}
	servers, err := s.placement.forLayout(ctx, pool, s.opts.DegradedWrites)
	if err != nil {
		return "", err
	}
	var gwSrv *shoal.Server
	if needsGateway(pool.Layout) {
		if gwSrv, err = s.placement.gateway(ctx, pool.Layout); err != nil {
			return "", err
		}
	}
	placed := make([]string, len(servers))
	for i, sv := range servers {
		placed[i] = sv.ID
	}
	// A degraded write leaves the last parity shards out: an empty id in
	// the gw's URL, and no row, which scrub reports and repair fills.
	ids := append(slices.Clone(placed), make([]string, pool.Layout.Width()-len(placed))...)
	now := time.Now()
	u := &shoal.Upload{
		ID:      randomHex(),
		Path:    p.path,
		Servers: placed,
		Object:  randomHex(),
		Layout:  pool.Layout,
		Cond:    p.cond,
		// The body must start while the URL is valid; the data server's
		// next heartbeat then renews the reservation (UploadTTL at a
		// time) for as long as it receives it.
		Expires:    now.Add(s.opts.URLTTL + s.opts.ServerTTL),
		Client:     p.client,
		MaxPending: max(s.opts.MaxPendingUploads, 0),
	}
	if err := s.cat.BeginUpload(ctx, u); err != nil {
		return "", err
	}
	exp := now.Add(s.opts.URLTTL)
	if gwSrv != nil {
		return wire.GatewayURL(s.keys, gwSrv.URL, fasthttp.MethodPut, u.Object, u.ID, u.Layout, ids, exp), nil
	}
	return s.keys.URL(servers[0].URL, fasthttp.MethodPut, u.Object, u.ID, exp), nil
}

// readURLs returns signed GET URLs for e, best first: for replicas one per
// live replica (random first, so reads spread), for EC one per live gw
// with the shard servers in shard order. KindUnavailable if there is none.
func (s *Server) readURLs(ctx context.Context, e *shoal.Entry) ([]string, error) {
	exp := time.Now().Add(s.opts.URLTTL)
	if e.Layout.Kind == shoal.LayoutEC {
		servers, object, err := e.ShardServers()
		if err != nil {
			return nil, err
		}
		g, err := s.placement.gateway(ctx, e.Layout)
		if err != nil {
			return nil, err
		}
		return []string{wire.GatewayURL(s.keys, g.URL, fasthttp.MethodGet, object, "", e.Layout, servers, exp)}, nil
	}
	reps, err := s.placement.liveReplicas(ctx, e)
	if err != nil {
		return nil, err
	}
	urls := make([]string, len(reps))
	for i, r := range reps {
		urls[i] = s.keys.URL(r.url, fasthttp.MethodGet, r.object, "", exp)
	}
	return urls, nil
}

type liveReplica struct{ url, object string }

// liveReplicas lists e's replicas on live, non-retired servers, starting
// at a random one. KindUnavailable if none is live.
func (p *placement) liveReplicas(ctx context.Context, e *shoal.Entry) ([]liveReplica, error) {
	_, byID, err := p.list(ctx)
	if err != nil {
		return nil, err
	}
	n := len(e.Replicas)
	if n == 0 {
		return nil, shoal.Errorf("placement", shoal.KindCorrupt, "file has no replicas")
	}
	now := time.Now()
	start := rand.IntN(n)
	var out []liveReplica
	for i := range n {
		r := e.Replicas[(start+i)%n]
		if sv := byID[r.Server]; sv != nil && sv.State != shoal.ServerRetired && sv.Live(now, p.ttl) {
			out = append(out, liveReplica{sv.URL, r.Object})
		}
	}
	if len(out) == 0 {
		var names []string
		for _, r := range e.Replicas {
			names = append(names, r.Server)
		}
		return nil, shoal.Errorf("placement", shoal.KindUnavailable, "no live data server holds this file (%s on %s)",
			e.Layout, strings.Join(names, ", "))
	}
	return out, nil
}
