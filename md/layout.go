package md

import (
	"context"
	"slices"
	"time"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/placement"
	"shoal/wire"
)

// Where a file's bytes go and come from: md asks placement for the
// servers and signs the URLs the client (or md itself) uses.

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

// reserve picks the servers of the file's layout (and a gw when the
// layout needs one), records the upload and returns the signed PUT URL the
// body goes to: a data server's for replica:1, a gw's otherwise.
func (s *Server) reserve(ctx context.Context, p *putPlan) (string, error) {
	p.commits = false
	pool, err := s.poolFor(ctx, p.path)
	if err != nil {
		return "", err
	}
	servers, err := s.placement.ForLayout(ctx, pool, s.opts.DegradedWrites, placement.PerServer(pool.Layout, p.length))
	if err != nil {
		return "", err
	}
	var gwSrv *shoal.Server
	if placement.NeedsGateway(pool.Layout) {
		if gwSrv, err = s.placement.Gateway(ctx, pool.Layout); err != nil {
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
	p.target, p.upload = servers[0].ID, u.ID
	if p.commits = p.proxied && p.method == ""; p.commits {
		return p.as.tag(s.keys.CallerCommitsURLAs(servers[0].URL, u.Object, u.ID, p.as.who, u.Reserve, exp)), nil
	}
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
	}
	// The reservation, charged to the quotas before any byte moves, is
	// also the most the data server lets the upload write.
	if u.Reserve = p.length; p.length < 0 {
		// Outside quotas only md.max_put_body and the data servers' own
		// limits bound it.
		u.Reserve, u.Flexible, u.UnquotedMax = s.opts.ChunkedReserve, true, shoal.Unbounded
		if s.opts.MaxPutBody > 0 {
			u.Reserve, u.UnquotedMax = min(u.Reserve, s.opts.MaxPutBody), s.opts.MaxPutBody
		}
	}
	return u
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
	ts, err := s.readTargetsFor(ctx, e, as, fasthttp.MethodGet)
	for i := range ts {
		ts[i].url = wire.WithValidators(ts[i].url, e.ETag(), e.MTime)
	}
	return ts, err
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
		gws, err := s.placement.Gateways(ctx, e.Layout)
		if err != nil {
			return nil, err
		}
		out := make([]readTarget, len(gws))
		for i, g := range gws {
			out[i] = readTarget{as.tag(wire.GatewayURLAs(s.keys, g.URL, method, object, "", as.who, e.Layout, servers, exp)), g.ID}
		}
		return out, nil
	}
	reps, err := s.placement.LiveReplicas(ctx, e)
	if err != nil {
		return nil, err
	}
	out := make([]readTarget, len(reps))
	for i, r := range reps {
		out[i] = readTarget{as.tag(s.keys.URLAs(r.URL, method, r.Object, "", as.who, exp)), r.Server}
	}
	return out, nil
}
