package ec

import (
	"context"
	"hash/crc32"
	"io"
	"sync"
	"time"

	"shoal"
)

// A GET of more than one stripe is streamed: one GET per data shard covers
// the whole span of the stripes needed (see openSpan), one goroutine per
// shard reads it chunk by chunk into a few reused buffers and checks each
// crc, and the reader hands the client the data chunks in order. Parity is
// not fetched while the data shards are healthy. A stripe whose data chunk
// failed (stream broken, crc mismatch) falls back to the range-read path:
// the missing chunks are read from the other shards and the stripe
// reconstructed, so wrong bytes are never sent. A broken stream stays
// broken; its later stripes take the same fallback.

// streamDepth is how many chunks each shard may read ahead of the client:
// memory per GET is about K·(streamDepth+2)+M chunks, a few stripes.
const streamDepth = 4

// streamStall bounds the wait for one chunk of a shard stream; a stream
// that stalls longer is treated as failed (its stripes are reconstructed).
var streamStall = 30 * time.Second

// NewReader returns the reader serving bytes [off, end) of obj (opened
// from a Store, a Mirror or any store) to a client; closing it closes obj.
// Erasure-coded spans of two stripes or more are streamed; anything else
// is read through the prefetcher.
func NewReader(obj shoal.Object, off, end int64) io.ReadCloser {
	o, ok := obj.(*object)
	if !ok {
		return newPrefetcher(obj, obj, off, end, 4<<20)
	}
	if oneStripe(o, off, end) {
		return newPrefetcher(obj, obj, off, end, int(readAhead*o.geo.stripeData()))
	}
	return o.stream(off, end)
}

// InOneStripe reports whether [off, end) of obj lies within one stripe of
// an erasure-coded object: a span best read whole before answering, so
// that a stripe that cannot be read is a clear error rather than a body
// cut short.
func InOneStripe(obj shoal.Object, off, end int64) bool {
	o, ok := obj.(*object)
	return ok && oneStripe(o, off, end)
}

// oneStripe reports whether [off, end) of o lies within one stripe.
func oneStripe(o *object, off, end int64) bool {
	sd := o.geo.stripeData()
	return end <= off || (end-1)/sd == off/sd
}

// stripeStream reads [off, end) of an object by streaming its data shards.
type stripeStream struct {
	o        *object
	off, end int64 // user bytes still to send
	ctx      context.Context
	cancel   context.CancelFunc
	shards   []shardStream // one per data shard
	wg       sync.WaitGroup
	once     sync.Once

	next   int64    // the stripe the shard streams deliver next
	loaded int64    // the stripe in chunks, -1 if none
	chunks [][]byte // K+M: the loaded stripe's chunks; [:K] its data
	held   [][]byte // the K buffers of the loaded stripe, to give back
	parity []byte   // memory for the chunks a fallback reads, M chunk slots
	tried  []bool
	bad    []error
	err    error // sticky: the stream cannot go on
}

// shardStream is the pipe from one data shard's reader goroutine.
type shardStream struct {
	out  chan chunkRead // chunks in stripe order
	free chan []byte    // buffers back from the consumer
}

// chunkRead is one chunk from a shard stream: buf is the chunk and its crc,
// checked when err is nil.
type chunkRead struct {
	st  int64
	buf []byte
	err error
}

func (o *object) stream(off, end int64) *stripeStream {
	g := o.geo
	sd := g.stripeData()
	first, last := off/sd, (end-1)/sd
	ctx, cancel := context.WithCancel(context.Background())
	n := g.k + g.m
	s := &stripeStream{
		o: o, off: off, end: end, ctx: ctx, cancel: cancel,
		shards: make([]shardStream, g.k),
		next:   first, loaded: -1,
		chunks: make([][]byte, n),
		held:   make([][]byte, g.k),
		tried:  make([]bool, n),
		bad:    make([]error, n),
	}
	depth := int(min(int64(streamDepth), last-first+1))
	for i := range s.shards {
		sh := shardStream{out: make(chan chunkRead, depth), free: make(chan []byte, depth+2)}
		for range depth + 1 {
			sh.free <- getChunkBuf(g.chunk + CRCSize)
		}
		s.shards[i] = sh
		s.wg.Go(func() { s.pump(i, first, last) })
	}
	return s
}

// pump streams data shard i's chunks of stripes [first, last] into its
// pipe. After a transport failure it sends that error for every stripe
// left, without reading; a crc mismatch only concerns its own chunk.
func (s *stripeStream) pump(i int, first, last int64) {
	g := s.o.geo
	sh := s.shards[i]
	var body io.ReadCloser
	var broken error
	if s.o.down[i].Load() {
		broken = shoal.Errorf("ec.stream", shoal.KindUnavailable, "shard down")
	} else {
		from, to := g.chunkOff(first), g.chunkOff(last)+g.chunkLen(last)+CRCSize
		ctx, cancel := context.WithCancel(s.ctx)
		defer cancel()
		stall := time.AfterFunc(streamStall, cancel)
		defer stall.Stop()
		if body, broken = s.o.openSpan(ctx, i, from, to-from); broken == nil {
			defer body.Close()
			stall.Stop()
			body = &stallReader{r: body, t: stall}
		}
	}
	for st := first; st <= last; st++ {
		var buf []byte
		select {
		case buf = <-sh.free:
		case <-s.ctx.Done():
			return
		}
		buf = buf[:g.chunkLen(st)+CRCSize]
		err := broken
		if err == nil {
			if sum, rerr := readSummed(body, buf); rerr != nil {
				broken = shoal.E("ec.stream", shoal.KindUnavailable, rerr)
				err = broken
				body.Close()
			} else {
				err = checkSum(buf, sum, st)
			}
		}
		select {
		case sh.out <- chunkRead{st: st, buf: buf, err: err}:
		case <-s.ctx.Done():
			return
		}
	}
}

// readSummed fills buf (a chunk and its crc) from r and returns the crc32c
// of the chunk part. The sum is taken piece by piece right after each read,
// while the bytes the kernel just copied are more likely in the CPU cache
// (crc32c here is memory bound: in the 4-GET profile it went from 1.8 to
// 1.4 s per 7.5 GiB). Reads are not capped to keep pieces smaller: with
// 64 KiB reads the crc cost a third as much, but the extra read syscalls
// cost more than that (BenchmarkGet128MiBParallel, 1.31-1.44 against
// 1.19-1.23 cpu-s/GiB).
func readSummed(r io.Reader, buf []byte) (uint32, error) {
	cl := len(buf) - CRCSize
	var sum uint32
	got := 0
	for got < len(buf) {
		n, err := r.Read(buf[got:])
		if lo, hi := got, min(got+n, cl); lo < hi {
			sum = crc32.Update(sum, castagnoli, buf[lo:hi])
		}
		got += n
		if err != nil && got < len(buf) {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
	}
	return sum, nil
}

// stallReader cancels its stream (through the timer) when one read waits
// longer than streamStall.
type stallReader struct {
	r io.ReadCloser
	t *time.Timer
}

func (r *stallReader) Read(p []byte) (int, error) {
	r.t.Reset(streamStall)
	n, err := r.r.Read(p)
	r.t.Stop()
	return n, err
}

func (r *stallReader) Close() error { return r.r.Close() }

// load takes stripe st (the next one) from the shard streams, completing
// it from the other shards by range reads if a data chunk is missing.
func (s *stripeStream) load(st int64) error {
	g := s.o.geo
	if st != s.next {
		return shoal.Errorf("ec.stream", shoal.KindOther, "stripe %d asked, %d next", st, s.next)
	}
	s.release()
	s.next++
	cl := g.chunkLen(st)
	clear(s.tried)
	clear(s.bad)
	missing := false
	for i := range s.shards {
		var r chunkRead
		select {
		case r = <-s.shards[i].out:
		case <-s.ctx.Done():
			return shoal.E("ec.stream", shoal.KindUnavailable, s.ctx.Err())
		}
		s.held[i] = r.buf
		if r.err == nil {
			s.chunks[i] = r.buf[:cl]
			continue
		}
		missing = true
		s.chunks[i] = r.buf[:0]
		s.bad[i] = r.err
		// The same bytes read again would fail their crc again; a broken
		// stream's shard may still answer a range read.
		s.tried[i] = shoal.IsKind(r.err, shoal.KindCorrupt)
	}
	s.loaded = st
	if !missing {
		return nil
	}
	if s.parity == nil {
		s.parity = make([]byte, int64(g.m)*(g.chunk+CRCSize))
	}
	for j := range g.m {
		s.chunks[g.k+j] = s.parity[int64(j)*(g.chunk+CRCSize):][:0]
	}
	if err := s.o.fill(st, s.chunks, s.tried, s.bad); err != nil {
		return err
	}
	return s.o.reconstruct(st, s.chunks)
}

// release gives the loaded stripe's buffers back to the shard streams.
func (s *stripeStream) release() {
	for i, b := range s.held {
		if b != nil {
			s.shards[i].free <- b[:cap(b)] // never full: depth+2 buffers exist
			s.held[i] = nil
		}
	}
	for i := range s.chunks {
		s.chunks[i] = nil
	}
	s.loaded = -1
}

// piece returns the next bytes to send, at most max of them, all within
// one chunk, and advances past them. The slice is valid until the next
// call.
func (s *stripeStream) piece(max int64) ([]byte, error) {
	if s.err != nil {
		return nil, s.err
	}
	if s.off >= s.end {
		return nil, io.EOF
	}
	sd := s.o.geo.stripeData()
	st := s.off / sd
	if st != s.loaded {
		if err := s.load(st); err != nil {
			s.err = err
			return nil, err
		}
	}
	in := s.off - st*sd
	cl := int64(len(s.chunks[0]))
	c, at := in/cl, in%cl
	n := min(cl-at, s.end-s.off, max)
	s.off += n
	return s.chunks[c][at : at+n], nil
}

func (s *stripeStream) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		b, err := s.piece(int64(len(p) - n))
		if err != nil {
			if n > 0 && err == io.EOF {
				return n, nil
			}
			return n, err
		}
		n += copy(p[n:], b)
	}
	return n, nil
}

// WriteTo hands w whole chunks, which fasthttp writes to the connection
// without copying them into its buffer.
func (s *stripeStream) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for {
		b, err := s.piece(s.end)
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
		n, err := w.Write(b)
		total += int64(n)
		if err != nil {
			return total, err
		}
	}
}

// Close stops the shard streams, returns the buffers and closes the
// object.
func (s *stripeStream) Close() error {
	s.once.Do(func() {
		s.cancel()
		s.wg.Wait()
		s.release()
		for _, sh := range s.shards {
			close(sh.free)
			for b := range sh.free {
				putChunkBuf(b)
			}
			close(sh.out)
			for r := range sh.out {
				putChunkBuf(r.buf[:cap(r.buf)])
			}
		}
	})
	return s.o.Close()
}

// chunkBufs pools chunk buffers across GETs, by size.
var chunkBufs sync.Map // int64 → *sync.Pool of *[]byte

func getChunkBuf(size int64) []byte {
	p, _ := chunkBufs.LoadOrStore(size, &sync.Pool{})
	if b, ok := p.(*sync.Pool).Get().(*[]byte); ok {
		return *b
	}
	return make([]byte, size)
}

func putChunkBuf(b []byte) {
	if p, ok := chunkBufs.Load(int64(cap(b))); ok {
		p.(*sync.Pool).Put(&b)
	}
}
