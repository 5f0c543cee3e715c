package gw

import (
	"context"
	"fmt"
	"io"

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
	obj   shoal.Object // nil unless State is ShardOK (or ShardCorrupt with a readable body)
	hdr   header
	foot  footer
	State ShardState
	Err   error
}

// probe opens every shard of id in parallel and reads its header and
// footer. It picks the file's geometry from the shards that agree (the
// largest group; normally all) and marks the others corrupt. ok counts the
// shards in that group.
func (s *Store) probe(ctx context.Context, id string) (ps []probed, geo geometry, foot footer, ok int) {
	ps = make([]probed, s.width())
	s.eachShard(func(i int) error {
		ps[i] = s.probeOne(ctx, i, id)
		return nil
	})
	type key struct {
		chunk int64
		foot  footer
	}
	count := map[key]int{}
	var best key
	for i := range ps {
		if ps[i].State != ShardOK {
			continue
		}
		k := key{ps[i].hdr.ChunkSize, ps[i].foot}
		k.foot.MTime = k.foot.MTime.UTC()
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
		k := key{ps[i].hdr.ChunkSize, ps[i].foot}
		k.foot.MTime = k.foot.MTime.UTC()
		if k != best {
			ps[i].State = ShardCorrupt
			ps[i].Err = shoal.Errorf("gw.probe", shoal.KindCorrupt, "shard %d disagrees with the others on size or sums", i)
			continue
		}
		ok++
	}
	return ps, geo, best.foot, ok
}

func (s *Store) probeOne(ctx context.Context, i int, id string) probed {
	obj, err := s.shards[i].Open(ctx, id)
	switch {
	case shoal.IsKind(err, shoal.KindNotFound):
		return probed{State: ShardMissing, Err: err}
	case err != nil:
		return probed{State: ShardUnreachable, Err: err}
	}
	p := probed{obj: obj}
	corrupt := func(err error) probed {
		p.State, p.Err = ShardCorrupt, err
		return p
	}
	size := obj.Size()
	if size < headerSize+footerSize {
		return corrupt(shoal.Errorf("gw.probe", shoal.KindCorrupt, "shard %d: %d bytes, too short", i, size))
	}
	b := make([]byte, headerSize+footerSize)
	if err := readFull(obj, b[:headerSize], 0); err != nil {
		p.obj = nil
		obj.Close()
		return probed{State: ShardUnreachable, Err: err}
	}
	if err := readFull(obj, b[headerSize:], size-footerSize); err != nil {
		p.obj = nil
		obj.Close()
		return probed{State: ShardUnreachable, Err: err}
	}
	if p.hdr, err = parseHeader(b[:headerSize]); err != nil {
		return corrupt(err)
	}
	if p.foot, err = parseFooter(b[headerSize:]); err != nil {
		return corrupt(err)
	}
	if p.hdr.K != s.k || p.hdr.M != s.m || p.hdr.Index != i {
		return corrupt(shoal.Errorf("gw.probe", shoal.KindCorrupt, "shard %d: header says ec:%d+%d shard %d", i, p.hdr.K, p.hdr.M, p.hdr.Index))
	}
	g := geometry{k: s.k, m: s.m, chunk: p.hdr.ChunkSize, size: p.foot.Size}
	if g.shardSize() != size {
		return corrupt(shoal.Errorf("gw.probe", shoal.KindCorrupt, "shard %d: %d bytes, want %d", i, size, g.shardSize()))
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
