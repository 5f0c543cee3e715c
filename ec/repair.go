package ec

import (
	"context"
	"encoding/binary"
	"io"
	"sync"
	"sync/atomic"

	"shoal"
)

// RepairReport says what Repair found and did.
type RepairReport struct {
	Before  *Report        // Verify's findings before the repair
	Rebuilt []RebuiltShard // shards written anew
	Skipped []SkippedShard // bad shards left as they were
}

// RebuiltShard is a shard Repair wrote.
type RebuiltShard struct {
	Index   int
	InPlace bool // rewritten on its own shard store; otherwise on targets[Index]
	Size    int64
	Adler32 uint32 // of the shard object, for md's replica row
}

// SkippedShard is a bad shard Repair could not rebuild, and why.
type SkippedShard struct {
	Index  int
	Reason string
}

// Repair rebuilds the missing and corrupt shards of id from the good ones.
// A shard whose index has a store in targets is rebuilt there (the caller
// then points md's replica at that server; the old shard, if any, is left
// for the garbage queue). Otherwise it is rebuilt in place on its own shard
// store, removing a corrupt copy first; an unreachable shard with no target
// is skipped. Fewer than K good chunks in any stripe is KindUnavailable and
// nothing is written.
func Repair(ctx context.Context, s *Store, id string, targets map[int]shoal.BlobStore) (*RepairReport, error) {
	const op = "ec.Repair"
	before, err := s.Verify(ctx, id)
	if err != nil {
		return &RepairReport{Before: before}, err
	}
	rr := &RepairReport{Before: before}
	if before.Lost > 0 {
		return rr, shoal.Errorf(op, shoal.KindUnavailable, "%s: %d stripes have fewer than %d good chunks", id, before.Lost, s.k)
	}
	dsts := map[int]shoal.BlobStore{}
	inPlace := map[int]bool{}
	for _, i := range before.Bad() {
		if t := targets[i]; t != nil {
			dsts[i] = t
			continue
		}
		sr := before.Shards[i]
		if _, absent := s.shards[i].(Absent); absent {
			// Rebuilt "in place" it would be discarded, and reported rebuilt.
			rr.Skipped = append(rr.Skipped, SkippedShard{i, "left out by a degraded write and no target given"})
			continue
		}
		if sr.State == ShardUnreachable {
			rr.Skipped = append(rr.Skipped, SkippedShard{i, "shard store unreachable and no target given"})
			continue
		}
		if sr.State == ShardCorrupt {
			if err := s.shards[i].Remove(ctx, id); err != nil {
				rr.Skipped = append(rr.Skipped, SkippedShard{i, "removing the corrupt copy: " + err.Error()})
				continue
			}
		}
		dsts[i], inPlace[i] = s.shards[i], true
	}
	if len(dsts) == 0 {
		return rr, nil
	}
	written, err := s.rebuild(ctx, id, dsts)
	for i, w := range written {
		rr.Rebuilt = append(rr.Rebuilt, RebuiltShard{Index: i, InPlace: inPlace[i], Size: w.Size, Adler32: w.Adler32})
	}
	return rr, err
}

// rebuild reconstructs the shards in dsts stripe by stripe from the other
// shards and streams each into its store.
func (s *Store) rebuild(ctx context.Context, id string, dsts map[int]shoal.BlobStore) (map[int]ShardInfo, error) {
	const op = "ec.Repair"
	obj, err := s.Open(ctx, id)
	if err != nil {
		return nil, err
	}
	o := obj.(*object)
	defer o.Close()
	n := s.width()
	required := make([]bool, n)
	for i := range dsts {
		required[i] = true
		o.down[i].Store(true) // never read from a shard being replaced
	}
	foot := o.foot // to copy into rebuilt shards

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pipes := map[int]*io.PipeWriter{}
	var mu sync.Mutex
	out := map[int]ShardInfo{}
	errs := make([]error, n)
	var failed atomic.Bool
	var wg sync.WaitGroup
	for i, dst := range dsts {
		pr, pw := io.Pipe()
		pipes[i] = pw
		wg.Go(func() {
			info, sums, err := dst.Create(ctx, id, pr)
			pr.CloseWithError(err)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs[i] = err
				failed.Store(true)
				return
			}
			out[i] = ShardInfo{Index: i, Size: info.Size, Adler32: sums.Adler32}
		})
	}
	werr := func() error {
		for i, pw := range pipes {
			if _, err := pw.Write(header{K: s.k, M: s.m, Index: i, ChunkSize: o.geo.chunk}.marshal()); err != nil {
				return err
			}
		}
		for st := range o.geo.stripes() {
			chunks, err := o.gather(st, nil)
			if err != nil {
				return err
			}
			if err := s.enc.ReconstructSome(chunks, required); err != nil {
				return shoal.Errorf(op, shoal.KindUnavailable, "stripe %d: %v", st, err)
			}
			for i, pw := range pipes {
				c := chunks[i]
				buf := c[:len(c)+CRCSize]
				binary.LittleEndian.PutUint32(buf[len(c):], crc32c(c))
				if _, err := pw.Write(buf); err != nil {
					return err
				}
			}
		}
		for _, pw := range pipes {
			if _, err := pw.Write(foot.marshal()); err != nil {
				return err
			}
		}
		return nil
	}()
	for _, pw := range pipes {
		if werr != nil {
			pw.CloseWithError(werr)
		} else {
			pw.Close()
		}
	}
	wg.Wait()
	if werr == nil && !failed.Load() {
		return out, nil
	}
	// Keep no half-rebuilt shard: remove those that made it.
	for i := range out {
		dsts[i].Remove(context.WithoutCancel(ctx), id)
	}
	if werr != nil && !failed.Load() {
		return nil, shoal.E(op, id, werr)
	}
	return nil, shoal.Errorf(op, writeFailure(errs), "%s: writing rebuilt shards: %s", id, shardErrors(errs))
}
