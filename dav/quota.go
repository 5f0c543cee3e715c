package dav

import "shoal"

// The RFC 4331 properties. quota-used-bytes of a collection is what lies
// below it: its quota's counter when it has one, else a sum over its
// subtree. quota-available-bytes is the least of what the quotas
// governing it have left (every quota on the path: see shoal.Quota) and
// of the free space of the live data servers of its pool, in user bytes
// (PropSource.PoolFree).

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
func (lv *LiveProps) quotasOf(e *shoal.Entry) ([]shoal.Quota, error) {
	if !lv.q.chainOK {
		lv.q.chainOK = true
		lv.q.chain, lv.q.chainE = lv.src.QuotasFor(lv.target)
	}
	if e.Path == lv.target || !e.IsDir || lv.q.chainE != nil {
		return lv.q.chain, lv.q.chainE
	}
	return lv.src.QuotasFor(e.Path)
}

// available is quota-available-bytes of e.
func (lv *LiveProps) available(e *shoal.Entry) (int64, error) {
	chain, err := lv.quotasOf(e)
	if err != nil {
		return 0, err
	}
	if !lv.q.freeOK {
		lv.q.freeOK = true
		lv.q.free, lv.q.freeE = lv.src.PoolFree(lv.target)
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
func (lv *LiveProps) used(e *shoal.Entry) (int64, error) {
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
	return lv.src.Usage(e.Path)
}
