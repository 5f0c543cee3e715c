package md

import (
	"context"
	"fmt"
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
// free space (room bytes each at least: a full data server is skipped),
// weighted by free space, on distinct hosts when there are enough of
// them; servers[i] holds replica or shard i. Suspect servers (md could
// not reach them) are left out. When the pool has too few:
// KindUnavailable (503, retry) if the missing ones are servers of the pool
// that are down (no heartbeat, or unreachable), which may come back;
// KindInsufficient (507) if the pool has too few active servers with free
// space at all. Either names what is missing. Unless degraded and the
// layout is ec:K+M with at least K+1 usable: then it picks them all (fewer
// than Width; the parity shards past them are left out).
func (p *placement) forLayout(ctx context.Context, pool shoal.Pool, degraded bool, room int64) ([]*shoal.Server, error) {
	servers, _, err := p.list(ctx)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	var cands []*shoal.Server
	down := 0
	for i := range servers {
		sv := &servers[i]
		if sv.Pool != pool.Name || sv.State != shoal.ServerActive || sv.Free <= 0 || sv.Free < room {
			continue
		}
		if p.usable(sv, now) {
			cands = append(cands, sv)
		} else {
			down++
		}
	}
	w := pool.Layout.Width()
	need := w
	if degraded && pool.Layout.Kind == shoal.LayoutEC {
		need = pool.Layout.K + 1
	}
	if len(cands) < need {
		kind, why := shoal.KindInsufficient, "no live data server for the rest"
		if len(cands)+down >= need {
			kind, why = shoal.KindUnavailable, fmt.Sprintf("%d of the pool's servers are down (no heartbeat, or unreachable): retry", down)
		}
		if need < w {
			return nil, shoal.Errorf("placement", kind,
				"not enough servers in pool %s for %s even degraded: needs at least %d live active data servers with free space (K data shards and one parity), has %d (%s)",
				pool.Name, pool.Layout, need, len(cands), why)
		}
		return nil, shoal.Errorf("placement", kind,
			"not enough servers in pool %s for %s: needs %d live active data servers with free space, has %d (%s)",
			pool.Name, pool.Layout, w, len(cands), why)
	}
	w = min(w, len(cands))
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

// gateway picks a live gw for a write, at random among those md did not
// find unreachable. KindUnavailable if there is none.
func (p *placement) gateway(ctx context.Context, l shoal.Layout) (*shoal.Server, error) {
	gws, err := p.gateways(ctx, l)
	if err != nil {
		return nil, err
	}
	if p.suspects.is(gws[0]) {
		return nil, shoal.Errorf("placement", shoal.KindUnavailable, "no reachable gw (pool %s) to write %s", shoal.GatewayPool, l)
	}
	return gws[0], nil
}

// gateways lists the live gws in random order, suspect ones last.
// KindUnavailable if there is none.
func (p *placement) gateways(ctx context.Context, l shoal.Layout) ([]*shoal.Server, error) {
	servers, _, err := p.list(ctx)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	var live []*shoal.Server
	for i := range servers {
		sv := &servers[i]
		if sv.Pool == shoal.GatewayPool && sv.State != shoal.ServerRetired && p.live(sv, now) {
			live = append(live, sv)
		}
	}
	if len(live) == 0 {
		return nil, shoal.Errorf("placement", shoal.KindUnavailable, "no live gw (pool %s) to serve %s", shoal.GatewayPool, l)
	}
	rand.Shuffle(len(live), func(i, j int) { live[i], live[j] = live[j], live[i] })
	return p.suspectsLast(live), nil
}

// suspectsLast moves the suspect servers of list to its end, keeping the
// order of the others; the suspect ones go by their last heartbeat, newest
// first (one md wrongly suspects, say under load, has heartbeated since;
// a dead one has not).
func (p *placement) suspectsLast(list []*shoal.Server) []*shoal.Server {
	var ok, sus []*shoal.Server
	for _, sv := range list {
		if p.suspects.is(sv) {
			sus = append(sus, sv)
		} else {
			ok = append(ok, sv)
		}
	}
	if len(sus) == 0 {
		return list
	}
	slices.SortStableFunc(sus, func(a, b *shoal.Server) int { return b.LastSeen.Compare(a.LastSeen) })
	return append(ok, sus...)
}

// reserve picks the servers of the file's layout (and a gw when the
// layout needs one), records the upload and returns the signed PUT URL the
// body goes to: a data server's for replica:1, a gw's otherwise.
func (s *Server) reserve(ctx context.Context, p *putPlan) (string, error) {
	pool, err := s.poolFor(ctx, p.path)
	if err != nil {
		return "", err
	}
	servers, err := s.placement.forLayout(ctx, pool, s.opts.DegradedWrites, perServer(pool.Layout, p.length))
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
	// The body must start while the URL is valid; the data server's
	// next heartbeat then renews the reservation (UploadTTL at a time)
	// for as long as it receives it.
	u := s.newUpload(p, pool, placed, now.Add(s.opts.URLTTL+s.opts.ServerTTL))
	if err := s.cat.BeginUpload(ctx, u); err != nil {
		return "", err
	}
	exp := now.Add(s.opts.URLTTL)
	method := fasthttp.MethodPut
	if p.method != "" {
		method = p.method // a third-party pull: bounded as a PUT is
	}
	if gwSrv != nil {
		p.target = gwSrv.ID
		return p.as.tag(wire.GatewayLimitURLAs(s.keys, gwSrv.URL, method, u.Object, u.ID, p.as.who, u.Layout, ids, u.Reserve, exp)), nil
	}
	p.target = servers[0].ID
	return p.as.tag(s.keys.LimitURLAs(servers[0].URL, method, u.Object, u.ID, p.as.who, u.Reserve, exp)), nil
}

// newUpload is the reservation of an upload of p into pool on the
// servers placed, expiring at expires unless renewed.
func (s *Server) newUpload(p *putPlan, pool shoal.Pool, placed []string, expires time.Time) *shoal.Upload {
	u := &shoal.Upload{
		ID:         randomHex(),
		Path:       p.path,
		Servers:    placed,
		Object:     randomHex(),
		Layout:     pool.Layout,
		Cond:       p.cond,
		Expires:    expires,
		Client:     p.client,
		MaxPending: max(s.opts.MaxPendingUploads, 0),
		NewEntry:   !p.exists,
	}
	// The reservation, charged to the quotas before any byte moves, is
	// also the most the data server lets the upload write.
	if u.Reserve = p.length; p.length < 0 {
		u.Reserve, u.Flexible = s.opts.ChunkedReserve, true
		if s.opts.MaxPutBody > 0 {
			u.Reserve = min(u.Reserve, s.opts.MaxPutBody)
		}
	}
	return u
}

// perServer is the room each data server of layout l needs for a file
// of length bytes: all of it for a replica, a K-th for a shard; 0 when the length is unknown (a
// chunked body: the data server checks its room as the bytes come).
func perServer(l shoal.Layout, length int64) int64 {
	if length <= 0 {
		return 0
	}
	if l.Kind == shoal.LayoutEC && l.K > 0 {
		return length / int64(l.K)
	}
	return length
}

// readTarget is where a GET of a file can be served from: a signed URL of
// a data server holding a replica, or of a gw for an erasure-coded file.
type readTarget struct {
	url    string
	server string // its id, to mark it suspect when it cannot be reached
}

// readTargets returns signed GET URLs for e, made for as, best first: for replicas one
// per live replica (random first, so reads spread), for EC one per live gw
// (any gw can serve any file) with the shard servers in shard order; in
// both cases the servers md could not reach last. KindUnavailable if there
// is none.
func (s *Server) readTargets(ctx context.Context, e *shoal.Entry, as urlTag) ([]readTarget, error) {
	return s.readTargetsFor(ctx, e, as, fasthttp.MethodGet)
}

// readTargetsFor is readTargets with URLs signed for method (a push's
// tpc.SignedMethod).
func (s *Server) readTargetsFor(ctx context.Context, e *shoal.Entry, as urlTag, method string) ([]readTarget, error) {
	exp := time.Now().Add(s.opts.URLTTL)
	if e.Layout.Kind == shoal.LayoutEC {
		servers, object, err := e.ShardServers()
		if err != nil {
			return nil, err
		}
		gws, err := s.placement.gateways(ctx, e.Layout)
		if err != nil {
			return nil, err
		}
		out := make([]readTarget, len(gws))
		for i, g := range gws {
			out[i] = readTarget{as.tag(wire.GatewayURLAs(s.keys, g.URL, method, object, "", as.who, e.Layout, servers, exp)), g.ID}
		}
		return out, nil
	}
	reps, err := s.placement.liveReplicas(ctx, e)
	if err != nil {
		return nil, err
	}
	out := make([]readTarget, len(reps))
	for i, r := range reps {
		out[i] = readTarget{as.tag(s.keys.URLAs(r.url, method, r.object, "", as.who, exp)), r.server}
	}
	return out, nil
}

type liveReplica struct {
	url, object, server string
	seen                time.Time // the server's last heartbeat
}

// liveReplicas lists e's replicas on live, non-retired servers, starting
// at a random one, those on suspect servers last (by last heartbeat,
// newest first, as suspectsLast). KindUnavailable if none is live.
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
	var out, suspect []liveReplica
	for i := range n {
		r := e.Replicas[(start+i)%n]
		sv := byID[r.Server]
		if sv == nil || sv.State == shoal.ServerRetired || !p.live(sv, now) {
			continue
		}
		if p.suspects.is(sv) {
			suspect = append(suspect, liveReplica{sv.URL, r.Object, sv.ID, sv.LastSeen})
		} else {
			out = append(out, liveReplica{sv.URL, r.Object, sv.ID, sv.LastSeen})
		}
	}
	slices.SortStableFunc(suspect, func(a, b liveReplica) int { return b.seen.Compare(a.seen) })
	out = append(out, suspect...)
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
