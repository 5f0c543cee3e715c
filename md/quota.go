package md

import (
	"context"
	"time"

	"shoal"
)

// The RFC 4331 properties. quota-used-bytes of a collection is what lies
// below it: its quota's counter when it has one, else a sum over its
// subtree. quota-available-bytes is the least of what the quotas
// governing it have left (every quota on the path: see shoal.Quota) and
// of the free space of the live data servers of its pool, in user bytes
// (a replica:N pool stores each byte N times, ec:K+M (K+M)/K times).
// Both cost catalog queries, so they are sent only when asked for by
// name, never in allprop.

// quotaValues holds, for one request, the quotas governing the
// PROPFIND's target and its pool's free space.
type quotaValues struct {
	chainOK bool
	chain   []shoal.Quota // governing the target, nearest first
	chainE  error
	freeOK  bool
	free    int64
	freeE   error
}

// quotasOf returns the quotas governing e: the target's (read once), or
// for a member of a listing the target's plus its own if it is a
// collection with one.
func (lv *liveValues) quotasOf(e *shoal.Entry) ([]shoal.Quota, error) {
	if !lv.q.chainOK {
		lv.q.chainOK = true
		lv.q.chain, lv.q.chainE = lv.srv.cat.QuotasFor(lv.srv.base, lv.target)
	}
	if e.Path == lv.target || !e.IsDir || lv.q.chainE != nil {
		return lv.q.chain, lv.q.chainE
	}
	return lv.srv.cat.QuotasFor(lv.srv.base, e.Path)
}

// available is quota-available-bytes of e.
func (lv *liveValues) available(e *shoal.Entry) (int64, error) {
	chain, err := lv.quotasOf(e)
	if err != nil {
		return 0, err
	}
	if !lv.q.freeOK {
		lv.q.freeOK = true
		lv.q.free, lv.q.freeE = lv.srv.poolFree(lv.srv.base, lv.target)
	}
	if lv.q.freeE != nil {
		return 0, lv.q.freeE
	}
	avail := lv.q.free
	for _, q := range chain {
		if room := q.Room(); room >= 0 && room < avail {
			avail = room
		}
	}
	return avail, nil
}

// used is quota-used-bytes of e.
func (lv *liveValues) used(e *shoal.Entry) (int64, error) {
	if !e.IsDir {
		return e.Size, nil
	}
	chain, err := lv.quotasOf(e)
	if err != nil {
		return 0, err
	}
	if len(chain) > 0 && chain[0].Dir == e.Path {
		return chain[0].UsedBytes, nil
	}
	used, _, err := lv.srv.cat.Usage(lv.srv.base, e.Path)
	return used, err
}

// poolFree is the room for new files at path: the free space of the live
// active data servers of its pool, divided by what the pool's layout
// stores per user byte.
func (s *Server) poolFree(ctx context.Context, path string) (int64, error) {
	pool, err := s.poolFor(ctx, path)
	if err != nil {
		return 0, err
	}
	servers, _, err := s.placement.list(ctx)
	if err != nil {
		return 0, err
	}
	now := time.Now()
	var free int64
	for i := range servers {
		sv := &servers[i]
		if sv.Pool == pool.Name && sv.State == shoal.ServerActive && s.placement.usable(sv, now) {
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
