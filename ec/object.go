package ec

import (
	"context"
	"encoding/binary"
	"io"
	"sync"
	"sync/atomic"

	"shoal"
)

// readAhead is how many stripes one ReadAt fetches at once.
const readAhead = 8

// object is an open erasure-coded object. Shards that failed at open or
// while reading are marked down and not asked again; a chunk that fails its
// crc only costs its stripe a reconstruction.
type object struct {
	s       *Store
	id      string
	geo     geometry
	foot    footer
	headLen int            // read at open from each shard (see headFor)
	objs    []shoal.Object // nil where the shard is not usable (or not opened yet)
	down    []atomic.Bool

	// Parity shards are opened only when a stripe needs one (see
	// openLater); until then they are pending. opening[i] guards
	// pending[i] and objs[i] while it may be pending.
	opening []sync.Mutex
	pending []bool
	key     shardKey // what a shard opened later must agree on
	closed  atomic.Bool

	bufs sync.Pool // *[]byte stripe buffers of full stripes

	mu     sync.Mutex // guards the cached stripe
	cached int64      // stripe index held in cache, -1 if none
	cache  [][]byte   // its K data chunks
}

var _ shoal.Object = (*object)(nil)

// Open implements shoal.BlobStore. KindNotFound if no shard exists;
// KindUnavailable if fewer than K shards are usable. Only the K data
// shards are opened while they are good: each costs one request for a
// small file (see HeadSize), and parity is opened when a read needs it.
func (s *Store) Open(ctx context.Context, id string) (shoal.Object, error) {
	return s.OpenAt(ctx, id, 0)
}

// OpenAt is Open for reads from user offset off on (the start of a Range):
// far into a large file it reads only each shard's header at open, not
// the head that would hold the first stripe.
func (s *Store) OpenAt(ctx context.Context, id string, off int64) (shoal.Object, error) {
	const op = "ec.Open"
	if !shoal.ValidObjectID(id) {
		return nil, shoal.Errorf(op, shoal.KindInvalid, "bad object id %q", id)
	}
	headLen := s.headFor(off)
	ps, geo, foot, ok := s.probeFirst(ctx, id, s.k, headLen)
	if ok < s.k {
		closeAll(ps)
		missing := 0
		for _, p := range ps {
			if p.State == ShardMissing {
				missing++
			}
		}
		if missing == len(ps) {
			return nil, shoal.E(op, id, shoal.KindNotFound)
		}
		return nil, shoal.Errorf(op, shoal.KindUnavailable, "%s: %d of %d shards usable, need %d: %s", id, ok, len(ps), s.k, describe(ps))
	}
	n := len(ps)
	o := &object{s: s, id: id, geo: geo, foot: foot, headLen: headLen, objs: make([]shoal.Object, n), down: make([]atomic.Bool, n), pending: make([]bool, n), opening: make([]sync.Mutex, n), cached: -1}
	o.key = shardKey{geo.chunk, foot}
	o.key.foot.MTime = o.key.foot.MTime.UTC()
	for i := range ps {
		switch {
		case !ps[i].opened:
			o.pending[i] = true
		case ps[i].State == ShardOK:
			o.objs[i] = ps[i].obj
		default:
			if ps[i].obj != nil {
				ps[i].obj.Close()
			}
			o.down[i].Store(true)
		}
	}
	return o, nil
}

// openLater opens a pending shard (a parity shard Open left alone) and
// checks that it agrees with the others; one that does not is marked down.
// It must be called before reading o.objs[i] of a shard that may be
// pending.
func (o *object) openLater(i int) error {
	o.opening[i].Lock()
	defer o.opening[i].Unlock()
	if !o.pending[i] {
		return nil
	}
	o.pending[i] = false
	if o.closed.Load() {
		o.down[i].Store(true)
		return shoal.Errorf("ec.read", shoal.KindUnavailable, "object closed")
	}
	p := o.s.probeOne(context.Background(), i, o.id, o.headLen)
	if p.State == ShardOK && p.key() != o.key {
		p.State, p.Err = ShardCorrupt, shoal.Errorf("ec.probe", shoal.KindCorrupt, "shard %d disagrees with the others on size or sums", i)
	}
	if p.State != ShardOK {
		if p.obj != nil {
			p.obj.Close()
		}
		o.down[i].Store(true)
		return p.Err
	}
	o.objs[i] = p.obj
	return nil
}

func (o *object) Size() int64 { return o.geo.size }

// Close closes the shard objects; a second Close does nothing.
func (o *object) Close() error {
	if o.closed.Swap(true) {
		return nil
	}
	for i := range o.objs {
		o.opening[i].Lock() // a shard being opened now is closed here
		if o.objs[i] != nil {
			o.objs[i].Close()
		}
		o.opening[i].Unlock()
	}
	return nil
}

// ReadAt implements io.ReaderAt: it fetches only the stripes covering
// [off, off+len(p)), up to readAhead of them at once.
func (o *object) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, shoal.Errorf("ec.ReadAt", shoal.KindInvalid, "negative offset")
	}
	if off >= o.geo.size {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	end := min(off+int64(len(p)), o.geo.size)
	sd := o.geo.stripeData()
	first, last := off/sd, (end-1)/sd
	for base := first; base <= last; base += readAhead {
		top := min(base+readAhead-1, last)
		stripes := make([][][]byte, top-base+1)
		mems := make([]*[]byte, len(stripes))
		errs := make([]error, len(stripes))
		copied := make([]bool, len(stripes))
		var wg sync.WaitGroup
		for j := range stripes {
			st := base + int64(j)
			if data := o.fromCache(st); data != nil {
				stripes[j] = data
				continue
			}
			lo, hi := max(st*sd, off), min((st+1)*sd, end)
			wg.Go(func() {
				if copied[j] = o.partial(st, p[lo-off:hi-off], lo-st*sd); !copied[j] {
					stripes[j], mems[j], errs[j] = o.stripe(st)
				}
			})
		}
		wg.Wait()
		var err error
		for j, data := range stripes {
			st := base + int64(j)
			if copied[j] {
				continue
			}
			if errs[j] != nil {
				if err == nil {
					err = errs[j]
					end = max(st*sd, off)
				}
				continue
			}
			if err != nil {
				continue
			}
			lo, hi := max(st*sd, off), min((st+1)*sd, end)
			copyOut(p[lo-off:hi-off], data, lo-st*sd)
			if hi < (st+1)*sd && hi < o.geo.size || lo > st*sd {
				o.toCache(st, data) // a partly read stripe: the next read may want the rest
			} else if mems[j] != nil {
				o.bufs.Put(mems[j])
			}
		}
		if err != nil {
			return int(end - off), err
		}
	}
	n := int(end - off)
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// partial reads dst from stripe st at offset lo (within the stripe) out of
// just the data chunks that hold it, when they are fewer than K and all
// read good; false leaves it to the whole stripe, which reconstructs. A
// few bytes deep in a large file then cost one chunk, not K.
func (o *object) partial(st int64, dst []byte, lo int64) bool {
	cl := o.geo.chunkLen(st)
	hi := lo + int64(len(dst))
	c0, c1 := lo/cl, (hi-1)/cl
	if c1-c0+1 >= int64(o.geo.k) {
		return false
	}
	buf := getChunkBuf(cl + CRCSize)
	defer putChunkBuf(buf)
	for c := c0; c <= c1; c++ {
		if o.down[c].Load() || o.readChunk(int(c), st, buf) != nil {
			return false
		}
		from, to := max(lo, c*cl), min(hi, (c+1)*cl)
		copy(dst[from-lo:], buf[from-c*cl:to-c*cl])
	}
	return true
}

// copyOut copies stripe bytes starting at off (within the stripe) from
// the data chunks into dst.
func copyOut(dst []byte, chunks [][]byte, off int64) {
	cl := int64(len(chunks[0]))
	for len(dst) > 0 {
		c, in := off/cl, off%cl
		n := copy(dst, chunks[c][in:])
		dst = dst[n:]
		off += int64(n)
	}
}

func (o *object) fromCache(st int64) [][]byte {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.cached == st {
		return o.cache
	}
	return nil
}

func (o *object) toCache(st int64, data [][]byte) {
	o.mu.Lock()
	o.cached, o.cache = st, data
	o.mu.Unlock()
}

// stripe returns the K data chunks of stripe st, read from the data
// shards when they are healthy, otherwise reconstructed from any K good
// chunks. Fewer than K good chunks is KindUnavailable: never wrong bytes.
func (o *object) stripe(st int64) ([][]byte, *[]byte, error) {
	k := o.geo.k
	var mem *[]byte
	if o.geo.chunkLen(st) == o.geo.chunk {
		mem, _ = o.bufs.Get().(*[]byte)
		if mem == nil {
			b := make([]byte, int64(k+o.geo.m)*(o.geo.chunk+CRCSize))
			mem = &b
		}
	}
	chunks, err := o.gather(st, mem)
	if err != nil {
		return nil, nil, err
	}
	if err := o.reconstruct(st, chunks); err != nil {
		return nil, nil, err
	}
	return chunks[:k], mem, nil
}

// reconstruct fills the empty data chunks of stripe st from the others
// (at least K of chunks are good, as fill leaves them).
func (o *object) reconstruct(st int64, chunks [][]byte) error {
	for i := range o.geo.k {
		if len(chunks[i]) == 0 {
			if err := o.s.enc.ReconstructData(chunks); err != nil {
				return shoal.Errorf("ec.ReadAt", shoal.KindUnavailable, "%s stripe %d: reconstruct: %v", o.id, st, err)
			}
			break
		}
	}
	return nil
}

// gather reads good chunks of stripe st until it has K of them, asking the
// data shards first. The chunks it lacks are returned empty, with capacity
// for a reconstruction to fill. buf, if not nil, is the memory to use.
func (o *object) gather(st int64, buf *[]byte) ([][]byte, error) {
	n := o.geo.k + o.geo.m
	slot := o.geo.chunkLen(st) + CRCSize
	var mem []byte
	if buf != nil && int64(len(*buf)) >= int64(n)*slot {
		mem = *buf
	} else {
		mem = make([]byte, int64(n)*slot)
	}
	chunks := make([][]byte, n)
	for i := range n {
		chunks[i] = mem[int64(i)*slot : int64(i+1)*slot][:0]
	}
	if err := o.fill(st, chunks, make([]bool, n), make([]error, n)); err != nil {
		return nil, err
	}
	return chunks, nil
}

// fill reads chunks of stripe st with range reads until K of chunks are
// good, asking the lowest untried shards first (data before parity). A
// non-empty chunks[i] is already good; an empty one must have capacity for
// the chunk and its crc. Shards marked tried are not asked (their failure,
// if any, is in bad, for the error message).
func (o *object) fill(st int64, chunks [][]byte, tried []bool, bad []error) error {
	k, n := o.geo.k, o.geo.k+o.geo.m
	cl := o.geo.chunkLen(st)
	slot := cl + CRCSize
	good := 0
	for i := range n {
		if len(chunks[i]) > 0 {
			good++
		}
	}
	for good < k {
		// Ask the first untried usable shards for as many chunks as are
		// still missing.
		var ask []int
		for i := 0; i < n && len(ask) < k-good; i++ {
			if !tried[i] && len(chunks[i]) == 0 && !o.down[i].Load() {
				ask = append(ask, i)
			}
		}
		if len(ask) == 0 {
			for i := range n {
				if bad[i] == nil && len(chunks[i]) == 0 {
					bad[i] = shoal.Errorf("ec.read", shoal.KindUnavailable, "shard down")
				}
			}
			return shoal.Errorf("ec.ReadAt", shoal.KindUnavailable, "%s stripe %d: %d of %d shards readable, need %d: %s", o.id, st, good, n, k, shardErrors(bad))
		}
		var wg sync.WaitGroup
		for _, i := range ask {
			tried[i] = true
			wg.Go(func() { bad[i] = o.readChunk(i, st, chunks[i][:slot]) })
		}
		wg.Wait()
		for _, i := range ask {
			if bad[i] == nil {
				chunks[i] = chunks[i][:cl]
				good++
			}
		}
	}
	return nil
}

// readChunk reads shard i's chunk of stripe st, with its crc, into buf and
// checks it. A shard that fails to read is marked down for this object.
func (o *object) readChunk(i int, st int64, buf []byte) error {
	if err := o.openLater(i); err != nil {
		return err
	}
	if err := readFull(o.objs[i], buf, o.geo.chunkOff(st)); err != nil {
		o.down[i].Store(true)
		return shoal.E("ec.read", shoal.KindUnavailable, err)
	}
	return checkChunk(buf, st)
}

// checkChunk verifies a chunk against the crc that follows it.
func checkChunk(buf []byte, st int64) error {
	return checkSum(buf, crc32c(buf[:len(buf)-CRCSize]), st)
}

// checkSum verifies the crc32c sum of a chunk against the crc that follows
// it in buf.
func checkSum(buf []byte, sum uint32, st int64) error {
	if sum != binary.LittleEndian.Uint32(buf[len(buf)-CRCSize:]) {
		return shoal.Errorf("ec.read", shoal.KindCorrupt, "stripe %d: chunk checksum mismatch", st)
	}
	return nil
}
