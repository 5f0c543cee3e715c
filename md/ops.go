package md

import (
	"context"
	"hash/adler32"
	"io"
	"sort"
	"time"

	"shoal"
	"shoal/ec"
)

// The operations (repair, drain, scrub) run inside md, in the admin
// request that asked for them: md has the catalog and the cluster secret
// to reach every data server, and the admin command shows elapsed
// progress and prints the summary md answers with.

// opFiles lists the paths of every file with a replica or shard on a
// non-retired data server (or on only, when not empty), sorted; tr counts
// the replica rows read.
func (s *Server) opFiles(ctx context.Context, only string, tr *Tracker) ([]string, error) {
	servers, err := s.cat.Servers(ctx)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	tr.Phase("listing files", "replicas", 0)
	for _, sv := range servers {
		if sv.Pool == shoal.GatewayPool || (only == "" && sv.State == shoal.ServerRetired) || (only != "" && sv.ID != only) {
			continue
		}
		err := s.cat.WalkReplicas(ctx, sv.ID, func(path string, _ shoal.Replica) error {
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
func (s *Server) serverInfo(ctx context.Context) (map[string]shoal.Server, error) {
	servers, err := s.cat.Servers(ctx)
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
func (s *Server) usable(sv shoal.Server, now time.Time) bool {
	return sv.State == shoal.ServerActive && sv.Live(now, s.opts.ServerTTL) && sv.Free > 0 && sv.Pool != shoal.GatewayPool
}

// pickTarget chooses a live active server of pool that holds nothing of e
// and is not in avoid, preferring hosts e does not use yet. "" if none.
func (s *Server) pickTarget(servers map[string]shoal.Server, pool string, e *shoal.Entry, avoid map[string]bool) string {
	now := time.Now()
	holds := map[string]bool{}
	hosts := map[string]bool{}
	for _, r := range e.Replicas {
		holds[r.Server] = true
		if sv, ok := servers[r.Server]; ok && s.usable(sv, now) {
			hosts[hostOf(sv.URL)] = true
		}
	}
	var best []*shoal.Server
	var other []*shoal.Server
	ids := make([]string, 0, len(servers))
	for id := range servers {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		sv := servers[id]
		if sv.Pool != pool || holds[id] || avoid[id] || !s.usable(sv, now) {
			continue
		}
		if hosts[hostOf(sv.URL)] {
			other = append(other, &sv)
		} else {
			best = append(best, &sv)
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

// storeOf is the BlobStore of a server id ("" URL for an unknown one
// fails at the first call, like a dead server).
func (s *Server) storeOf(servers map[string]shoal.Server, id string) shoal.BlobStore {
	if id == "" {
		return ec.Absent{} // a shard a degraded write left out
	}
	return s.opts.Store(servers[id])
}

// copyObject copies object from src to dst and checks the copy's adler32
// against want (the replica row's Sum; 0 is not checked).
func copyObject(ctx context.Context, src, dst shoal.BlobStore, object string, want uint32) (shoal.ObjectInfo, shoal.Sums, error) {
	const op = "md.copy"
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
