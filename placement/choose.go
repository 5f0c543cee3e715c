package placement

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"time"

	"shoal"
)

// NeedsGateway reports whether writes of l go through a gw: every EC
// layout, and replica:N with N > 1 (the gw writes the N copies in parallel
// and commits once all are durable). replica:1 goes straight to a data
// server.
func NeedsGateway(l shoal.Layout) bool {
	return l.Kind == shoal.LayoutEC || l.N > 1
}

// hostOf is the host part of a server URL (distinct hosts are preferred
// for the servers of one file).
func hostOf(u string) string {
	if pu, err := url.Parse(u); err == nil && pu.Hostname() != "" {
		return pu.Hostname()
	}
	return u
}

// ForLayout picks Width distinct live active data servers of the pool with
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
func (p *View) ForLayout(ctx context.Context, pool shoal.Pool, degraded bool, room int64) ([]*shoal.Server, error) {
	servers, _, err := p.List(ctx)
	if err != nil {
		return nil, err
	}
	chosen, err := p.choose(servers, pool, degraded, room)
	if err != nil && p.catchUp(ctx, nil) {
		if servers, _, lerr := p.List(ctx); lerr == nil {
			chosen, err = p.choose(servers, pool, degraded, room)
		}
	}
	return chosen, err
}

// choose is ForLayout over servers.
func (p *View) choose(servers []shoal.Server, pool shoal.Pool, degraded bool, room int64) ([]*shoal.Server, error) {
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

// Gateway picks a live gw for a write, at random among those md did not
// find unreachable. KindUnavailable if there is none.
func (p *View) Gateway(ctx context.Context, l shoal.Layout) (*shoal.Server, error) {
	gws, err := p.Gateways(ctx, l)
	if err != nil {
		return nil, err
	}
	if p.suspects.is(gws[0]) {
		return nil, shoal.Errorf("placement", shoal.KindUnavailable, "no reachable gw (pool %s) to write %s", shoal.GatewayPool, l)
	}
	return gws[0], nil
}

// Gateways lists the live gws in random order, suspect ones last.
// KindUnavailable if there is none.
func (p *View) Gateways(ctx context.Context, l shoal.Layout) ([]*shoal.Server, error) {
	servers, _, err := p.List(ctx)
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
func (p *View) suspectsLast(list []*shoal.Server) []*shoal.Server {
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

// Replica is a replica of a file on a live server.
type Replica struct {
	URL, Object, Server string    // the server's URL, the object, the server's id
	Seen                time.Time // the server's last heartbeat
}

// LiveReplicas lists e's replicas on live, non-retired servers, starting
// at a random one, those on suspect servers last (by last heartbeat,
// newest first, as suspectsLast). KindUnavailable if none is live.
func (p *View) LiveReplicas(ctx context.Context, e *shoal.Entry) ([]Replica, error) {
	_, byID, err := p.List(ctx)
	if err != nil {
		return nil, err
	}
	if missing := unknownServers(e, byID); len(missing) > 0 && p.catchUp(ctx, missing) {
		if _, byID, err = p.List(ctx); err != nil {
			return nil, err
		}
	}
	n := len(e.Replicas)
	if n == 0 {
		return nil, shoal.Errorf("placement", shoal.KindCorrupt, "file has no replicas")
	}
	now := time.Now()
	start := rand.IntN(n)
	var out, suspect []Replica
	for i := range n {
		r := e.Replicas[(start+i)%n]
		sv := byID[r.Server]
		if sv == nil || sv.State == shoal.ServerRetired || !p.live(sv, now) {
			continue
		}
		if p.suspects.is(sv) {
			suspect = append(suspect, Replica{sv.URL, r.Object, sv.ID, sv.LastSeen})
		} else {
			out = append(out, Replica{sv.URL, r.Object, sv.ID, sv.LastSeen})
		}
	}
	slices.SortStableFunc(suspect, func(a, b Replica) int { return b.Seen.Compare(a.Seen) })
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

// PerServer is the room each data server of layout l needs for a file
// of length bytes: all of it for a replica, a K-th for a shard; 0 when
// the length is unknown (a chunked body: the data server checks its room
// as the bytes come).
func PerServer(l shoal.Layout, length int64) int64 {
	if length <= 0 {
		return 0
	}
	if l.Kind == shoal.LayoutEC && l.K > 0 {
		return length / int64(l.K)
	}
	return length
}

// Free is the room for new files in pool: the free space of its live
// active data servers, divided by what the pool's layout stores per user
// byte.
func (p *View) Free(ctx context.Context, pool shoal.Pool) (int64, error) {
	servers, _, err := p.List(ctx)
	if err != nil {
		return 0, err
	}
	now := time.Now()
	var free int64
	for i := range servers {
		sv := &servers[i]
		if sv.Pool == pool.Name && sv.State == shoal.ServerActive && p.usable(sv, now) {
			free += sv.Free
		}
	}
	switch l := pool.Layout; {
	case l.Kind == shoal.LayoutEC && l.K > 0:
		free = free / int64(l.K+l.M) * int64(l.K)
	case l.N > 1:
		free /= int64(l.N)
	}
	return free, nil
}

// Hosts are the hosts of every data server and gw known (a third-party
// copy must reach none of them).
func (p *View) Hosts(ctx context.Context) []string {
	servers, _, err := p.List(ctx)
	if err != nil {
		return nil
	}
	hosts := make([]string, 0, len(servers))
	for _, sv := range servers {
		hosts = append(hosts, hostOf(sv.URL))
	}
	return hosts
}

// unknownServers lists the servers of e's replicas that byID does not
// list: the entry is newer than md's list (a data server that just
// registered through another md replica), or they were removed for good.
func unknownServers(e *shoal.Entry, byID map[string]*shoal.Server) []string {
	var ids []string
	for _, r := range e.Replicas {
		if byID[r.Server] == nil {
			ids = append(ids, r.Server)
		}
	}
	return ids
}
