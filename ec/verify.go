package ec

import (
	"bytes"
	"context"
	"crypto/md5"
	"hash/adler32"
	"sync"

	"shoal"
)

// Report is what Verify found of one object.
type Report struct {
	ID      string
	Size    int64 // user bytes
	Stripes int64
	Shards  []ShardReport // by shard index
	// Lost counts stripes with fewer than K good chunks: unreadable now
	// (shards unreachable) or for good (too many missing or corrupt).
	Lost int64
	// Inconsistent counts stripes whose chunks all pass their crc but
	// whose parity does not match the data (a writer bug, not bit rot).
	Inconsistent int64
	// SumsOK says the user bytes, as read and reconstructed, match the
	// adler32 and md5 recorded when the object was written.
	SumsOK bool
}

// ShardReport is the state of one shard.
type ShardReport struct {
	Index     int
	State     ShardState
	BadChunks int64  // chunks that failed their crc
	Err       string // the first problem seen, if any
}

// Bad returns the indices of the shards that need repair.
func (r *Report) Bad() []int {
	var bad []int
	for _, s := range r.Shards {
		if s.State != ShardOK {
			bad = append(bad, s.Index)
		}
	}
	return bad
}

// Healthy reports whether every shard is good and the data checks out.
func (r *Report) Healthy() bool {
	return len(r.Bad()) == 0 && r.Lost == 0 && r.Inconsistent == 0 && r.SumsOK
}

// Verify reads every chunk of every shard of id, checks the crcs, the
// parity and the user checksums, and reports bad shards (for scrub). Its
// error is KindNotFound if no shard exists, KindUnavailable (with the
// report) if fewer than K shards can be opened.
func (s *Store) Verify(ctx context.Context, id string) (*Report, error) {
	const op = "ec.Verify"
	if !shoal.ValidObjectID(id) {
		return nil, shoal.Errorf(op, shoal.KindInvalid, "bad object id %q", id)
	}
	ps, geo, foot, ok := s.probe(ctx, id)
	defer closeAll(ps)
	n := s.width()
	rep := &Report{ID: id, Shards: make([]ShardReport, n)}
	if ok > 0 { // the geometry comes from the usable shards: with none, it is unknown
		rep.Size, rep.Stripes = geo.size, geo.stripes()
	}
	missing := 0
	for i, p := range ps {
		rep.Shards[i] = ShardReport{Index: i, State: p.State}
		if p.Err != nil {
			rep.Shards[i].Err = p.Err.Error()
		}
		if p.State == ShardMissing {
			missing++
		}
	}
	if missing == n {
		return nil, shoal.E(op, id, shoal.KindNotFound)
	}
	if ok < s.k {
		rep.Lost = rep.Stripes
		return rep, shoal.Errorf(op, shoal.KindUnavailable, "%s: %d of %d shards usable: %s", id, ok, n, describe(ps))
	}
	ad, md := adler32.New(), md5.New()
	for st := range geo.stripes() {
		if err := ctx.Err(); err != nil {
			return rep, shoal.E(op, id, shoal.KindTimeout, err)
		}
		cl := geo.chunkLen(st)
		slot := cl + CRCSize
		mem := make([]byte, int64(n)*slot)
		chunks := make([][]byte, n)
		var wg sync.WaitGroup
		var mu sync.Mutex
		good := 0
		for i := range n {
			if ps[i].State != ShardOK || rep.Shards[i].State == ShardUnreachable {
				continue
			}
			wg.Go(func() {
				buf := mem[int64(i)*slot : int64(i+1)*slot]
				err := readFull(ps[i].obj, buf, geo.chunkOff(st))
				if err == nil {
					err = checkChunk(buf, st)
				}
				mu.Lock()
				defer mu.Unlock()
				sr := &rep.Shards[i]
				switch {
				case err == nil:
					chunks[i] = buf[:cl]
					good++
					return
				case shoal.IsKind(err, shoal.KindCorrupt):
					sr.BadChunks++
					sr.State = ShardCorrupt
				default:
					sr.State = ShardUnreachable
				}
				if sr.Err == "" {
					sr.Err = err.Error()
				}
			})
		}
		wg.Wait()
		if good < s.k {
			rep.Lost++
			continue
		}
		if good == n {
			if same, err := s.enc.Verify(chunks); err != nil || !same {
				rep.Inconsistent++
			}
		} else {
			for i := range n {
				if chunks[i] == nil {
					chunks[i] = mem[int64(i)*slot : int64(i+1)*slot][:0]
				}
			}
			if err := s.enc.ReconstructData(chunks); err != nil {
				rep.Lost++
				continue
			}
		}
		rest := geo.stripeLen(st)
		for i := 0; i < s.k && rest > 0; i++ {
			b := chunks[i][:min(cl, rest)]
			sum(ad, md, b)
			rest -= int64(len(b))
		}
	}
	rep.SumsOK = rep.Lost == 0 && ad.Sum32() == foot.Adler32 && bytes.Equal(md.Sum(nil), foot.MD5[:])
	return rep, nil
}
