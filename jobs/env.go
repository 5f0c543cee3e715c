package jobs

import (
	"context"
	"hash/adler32"
	"io"
	"math/rand/v2"
	"net/url"
	"sort"
	"time"

	"shoal"
	"shoal/ec"
	"shoal/wire"
)

// Catalog is what the operations need of the catalog: entries, the
// server table, the replicas of each server, moving a replica row, and
// the garbage queue (fsck tells queued garbage from orphans).
type Catalog interface {
	shoal.Statter
	shoal.ServerRegistry
	shoal.ReplicaWalker
	shoal.ReplicaReplacer
	shoal.GarbageQueue
}

// Env is what the operations run over.
type Env struct {
	Catalog Catalog
	// Store opens a data server's objects (in shoal: diskserver/remote
	// over its URL, signed with the cluster secret).
	Store func(shoal.Server) shoal.BlobStore
	// ServerTTL: a server is live if it heartbeated within this
	// (md.server_ttl).
	ServerTTL time.Duration
	// Grace is how long a replaced object stays before it becomes
	// garbage, so that reads in flight on signed URLs finish (md.url_ttl).
	Grace time.Duration
	// PlacementStale bounds how long an md may still place uploads on a
	// server after it was marked draining (placement.Refresh): drain
	// waits that long, plus a margin, before it retires a server.
	PlacementStale time.Duration
}

// Defaults for Env fields left zero.
const (
	DefaultServerTTL      = 15 * time.Second
	DefaultGrace          = time.Minute
	DefaultPlacementStale = time.Second
)

func (e Env) withDefaults() Env {
	if e.ServerTTL <= 0 {
		e.ServerTTL = DefaultServerTTL
	}
	if e.Grace <= 0 {
		e.Grace = DefaultGrace
	}
	if e.PlacementStale <= 0 {
		e.PlacementStale = DefaultPlacementStale
	}
	return e
}

// maxResumeProblems bounds the problems a checkpoint carries to the run
// that takes a job over (a checkpoint is written every heartbeat); the
// report counts those left out.
const maxResumeProblems = 1000

// capProblems is ps cut to maxResumeProblems, and how many were cut.
func capProblems(ps []wire.ProblemReplica) ([]wire.ProblemReplica, int) {
	if len(ps) <= maxResumeProblems {
		return ps, 0
	}
	return ps[:maxResumeProblems], len(ps) - maxResumeProblems
}

// opFiles lists the paths of every file with a replica or shard on a
// non-retired data server (or on only, when not empty), sorted: the
// order is the cursor a resumed repair or scrub goes on from. tr counts
// the replica rows read.
func opFiles(ctx context.Context, env Env, only string, tr *Tracker) ([]string, error) {
	servers, err := env.Catalog.Servers(ctx)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	tr.Phase("listing files", "replicas", 0)
	for _, sv := range servers {
		if sv.Pool == shoal.GatewayPool || (only == "" && sv.State == shoal.ServerRetired) || (only != "" && sv.ID != only) {
			continue
		}
		err := env.Catalog.WalkReplicas(ctx, sv.ID, func(path string, _ shoal.Replica) error {
			if path != "" {
				seen[path] = true
			}
			tr.Done(1)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out, nil
}

// serverInfo returns the server table by id, fresh from the catalog.
func serverInfo(ctx context.Context, env Env) (map[string]shoal.Server, error) {
	servers, err := env.Catalog.Servers(ctx)
	if err != nil {
		return nil, err
	}
	m := make(map[string]shoal.Server, len(servers))
	for _, sv := range servers {
		m[sv.ID] = sv
	}
	return m, nil
}

// usable reports whether a server can take new data now.
func usable(env Env, sv shoal.Server, now time.Time) bool {
	return sv.State == shoal.ServerActive && sv.Live(now, env.ServerTTL) && sv.Free > 0 && sv.Pool != shoal.GatewayPool
}

// poolOf is the pool of a file: that of the servers holding it.
func poolOf(servers map[string]shoal.Server, e *shoal.Entry) string {
	for _, r := range e.Replicas {
		if sv, ok := servers[r.Server]; ok && sv.Pool != "" {
			return sv.Pool
		}
	}
	return shoal.DefaultPool
}

// pickTarget chooses a live active server of pool that holds nothing of e
// and is not in avoid, preferring hosts e does not use yet, weighted by
// free space. "" if none.
func pickTarget(env Env, servers map[string]shoal.Server, pool string, e *shoal.Entry, avoid map[string]bool) string {
	now := time.Now()
	holds := map[string]bool{}
	hosts := map[string]bool{}
	for _, r := range e.Replicas {
		holds[r.Server] = true
		if sv, ok := servers[r.Server]; ok && usable(env, sv, now) {
			hosts[hostOf(sv.URL)] = true
		}
	}
	var best, other []shoal.Server
	ids := make([]string, 0, len(servers))
	for id := range servers {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		sv := servers[id]
		if sv.Pool != pool || holds[id] || avoid[id] || !usable(env, sv, now) {
			continue
		}
		if hosts[hostOf(sv.URL)] {
			other = append(other, sv)
		} else {
			best = append(best, sv)
		}
	}
	if len(best) > 0 {
		return weighted(best).ID
	}
	if len(other) > 0 {
		return weighted(other).ID
	}
	return ""
}

// hostOf is the host part of a server URL.
func hostOf(u string) string {
	if pu, err := url.Parse(u); err == nil && pu.Hostname() != "" {
		return pu.Hostname()
	}
	return u
}

// weighted picks one server at random, weighted by free space.
func weighted(from []shoal.Server) shoal.Server {
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

// storeOf is the BlobStore of a server id (an unknown one has no URL and
// fails at the first call, like a dead server).
func storeOf(env Env, servers map[string]shoal.Server, id string) shoal.BlobStore {
	if id == "" {
		return ec.Absent{} // a shard a degraded write left out
	}
	return env.Store(servers[id])
}

// copyObject copies object from src to dst and checks the copy's adler32
// against want (the replica row's Sum; 0 is not checked).
func copyObject(ctx context.Context, src, dst shoal.BlobStore, object string, want uint32) (shoal.ObjectInfo, shoal.Sums, error) {
	const op = "jobs.copy"
	obj, err := src.Open(ctx, object)
	if err != nil {
		return shoal.ObjectInfo{}, shoal.Sums{}, err
	}
	defer obj.Close()
	info, sums, err := dst.Create(ctx, object, io.NewSectionReader(obj, 0, obj.Size()))
	if err != nil {
		return info, sums, err
	}
	if want != 0 && sums.Adler32 != want {
		dst.Remove(context.WithoutCancel(ctx), object)
		return info, sums, shoal.Errorf(op, shoal.KindCorrupt, "%s: copy has adler32 %08x, the catalog says %08x", object, sums.Adler32, want)
	}
	return info, sums, nil
}

// checkReplica reads a plain replica whole and compares its size and
// adler32 with the catalog's; lim (may be nil) bounds the read rate.
// It returns "" when good, else the problem.
func checkReplica(ctx context.Context, st shoal.BlobStore, r shoal.Replica, size int64, lim *rateLimit) (problem string, read int64) {
	obj, err := st.Open(ctx, r.Object)
	switch {
	case shoal.IsKind(err, shoal.KindNotFound):
		return "missing", 0
	case err != nil:
		return "unreachable: " + shoal.Reason(err), 0
	}
	defer obj.Close()
	if obj.Size() != size {
		return "corrupt: size differs", 0
	}
	h := adler32.New()
	var rd io.Reader = io.NewSectionReader(obj, 0, obj.Size())
	if lim != nil {
		rd = &limitedReader{r: rd, lim: lim, ctx: ctx}
	}
	n, err := io.CopyBuffer(h, rd, make([]byte, 256<<10))
	if err != nil {
		return "unreadable: " + shoal.Reason(err), n
	}
	if r.Sum != 0 && h.Sum32() != r.Sum {
		return "corrupt: adler32 mismatch", n
	}
	return "", n
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
