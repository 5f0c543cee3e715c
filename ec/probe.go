package ec

import (
	"context"
	"fmt"
	"io"
	"sync"

	"shoal"
)

// ShardState is what a read found of one shard.
type ShardState uint8

const (
	ShardOK          ShardState = iota
	ShardMissing                // the shard store has no such object
	ShardUnreachable            // the shard store failed (down, I/O error)
	ShardCorrupt                // bad header or footer, wrong size, or a chunk failed its crc
)

func (s ShardState) String() string {
	switch s {
	case ShardOK:
		return "ok"
	case ShardMissing:
		return "missing"
	case ShardUnreachable:
		return "unreachable"
	case ShardCorrupt:
		return "corrupt"
	}
	return fmt.Sprintf("state(%d)", s)
}

// probed is one shard after probe: open, with its header and footer read.
type probed struct {
	obj    shoal.Object // nil unless State is ShardOK (or ShardCorrupt with a readable body)
	hdr    header
	foot   footer
	State  ShardState
	Err    error
	opened bool // probe asked this shard (Open leaves parity shards for later)
}

// shardKey is what the shards of one object agree on.
type shardKey struct {
	chunk int64
	foot  footer
}

func (p *probed) key() shardKey {
	k := shardKey{p.hdr.ChunkSize, p.foot}
	k.foot.MTime = k.foot.MTime.UTC()
	return k
}

// probe opens every shard of id in parallel and reads its header and
// footer. It picks the file's geometry from the shards that agree (the
// largest group; normally all) and marks the others corrupt. ok counts the
// shards in that group.
func (s *Store) probe(ctx context.Context, id string) (ps []probed, geo geometry, foot footer, ok int) {
	return s.probeFirst(ctx, id, s.width(), HeadSize)
}

// probeFirst is probe asking only the first n shards when all of them are
// good and agree and n ≥ K; otherwise it asks the others too. Open asks the
// K data shards: parity is needed only to reconstruct.
func (s *Store) probeFirst(ctx context.Context, id string, n, headLen int) (ps []probed, geo geometry, foot footer, ok int) {
	ps = make([]probed, s.width())
	probeRange := func(lo, hi int) {
		var wg sync.WaitGroup
		for i := lo; i < hi; i++ {
			wg.Go(func() { ps[i] = s.probeOne(ctx, i, id, headLen) })
		}
		wg.Wait()
	}
	probeRange(0, n)
	if n < s.width() {
		all := n >= s.k
		for i := range n {
			all = all && ps[i].State == ShardOK && ps[i].key() == ps[0].key()
		}
		if all {
			return ps, geometry{k: s.k, m: s.m, chunk: ps[0].hdr.ChunkSize, size: ps[0].foot.Size}, ps[0].foot, n
		}
		probeRange(n, s.width())
	}
	count := map[shardKey]int{}
	var best shardKey
	for i := range ps {
		if ps[i].State != ShardOK {
			continue
		}
		k := ps[i].key()
		count[k]++
		if count[k] > count[best] {
			best = k
		}
	}
	geo = geometry{k: s.k, m: s.m, chunk: best.chunk, size: best.foot.Size}
	for i := range ps {
		if ps[i].State != ShardOK {
			continue
		}
		if ps[i].key() != best {
			ps[i].State = ShardCorrupt
			ps[i].Err = shoal.Errorf("ec.probe", shoal.KindCorrupt, "shard %d disagrees with the others on size or sums", i)
			continue
		}
		ok++
	}
	return ps, geo, best.foot, ok
}

// probeOne opens shard i, reading its first headLen bytes (at least the
// header; see HeadSize), and checks its header and footer: one request for
// a small shard, two for a large one.
func (s *Store) probeOne(ctx context.Context, i int, id string, headLen int) probed {
	h, err := s.openShard(ctx, i, id, headLen)
	switch {
	case shoal.IsKind(err, shoal.KindNotFound):
		return probed{State: ShardMissing, Err: err, opened: true}
	case err != nil:
		return probed{State: ShardUnreachable, Err: err, opened: true}
	}
	p := probed{obj: h, opened: true}
	corrupt := func(err error) probed {
		p.State, p.Err = ShardCorrupt, err
		return p
	}
	size := h.Size()
	if size < HeaderSize+FooterSize {
		return corrupt(shoal.Errorf("ec.probe", shoal.KindCorrupt, "shard %d: %d bytes, too short", i, size))
	}
	fb := make([]byte, FooterSize)
	if err := readFull(h, fb, size-FooterSize); err != nil {
		p.obj = nil
		h.Close()
		return probed{State: ShardUnreachable, Err: err, opened: true}
	}
	if p.hdr, err = parseHeader(h.head[:HeaderSize]); err != nil {
		return corrupt(err)
	}
	if p.foot, err = parseFooter(fb); err != nil {
		return corrupt(err)
	}
	if p.hdr.K != s.k || p.hdr.M != s.m || p.hdr.Index != i {
		return corrupt(shoal.Errorf("ec.probe", shoal.KindCorrupt, "shard %d: header says ec:%d+%d shard %d", i, p.hdr.K, p.hdr.M, p.hdr.Index))
	}
	g := geometry{k: s.k, m: s.m, chunk: p.hdr.ChunkSize, size: p.foot.Size}
	if g.shardSize() != size {
		return corrupt(shoal.Errorf("ec.probe", shoal.KindCorrupt, "shard %d: %d bytes, want %d", i, size, g.shardSize()))
	}
	return p
}

// readFull reads len(b) bytes at off; a short read is io.ErrUnexpectedEOF.
func readFull(r io.ReaderAt, b []byte, off int64) error {
	n, err := r.ReadAt(b, off)
	if n == len(b) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// closeAll closes the open shard objects.
func closeAll(ps []probed) {
	for i := range ps {
		if ps[i].obj != nil {
			ps[i].obj.Close()
			ps[i].obj = nil
		}
	}
}

// describe lists the shards that are not OK, for error messages.
func describe(ps []probed) string {
	errs := make([]error, len(ps))
	for i, p := range ps {
		if p.State != ShardOK {
			errs[i] = fmt.Errorf("%s (%v)", p.State, p.Err)
		}
	}
	return shardErrors(errs)
}
