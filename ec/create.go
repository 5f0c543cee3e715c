package ec

import (
	"context"
	"crypto/md5"
	"encoding/binary"
	"errors"
	"hash"
	"hash/adler32"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"shoal"
)

// Written is what CreateShards wrote: the user object and each shard
// object (for md's commit: one replica per shard).
type Written struct {
	Info   shoal.ObjectInfo
	Sums   shoal.Sums // of the user bytes
	Shards []ShardInfo
}

// ShardInfo is one written shard object.
type ShardInfo struct {
	Index   int
	Size    int64  // bytes of the shard object
	Adler32 uint32 // adler32 of the shard object, for scrub and repair
}

// Create implements shoal.BlobStore.
func (s *Store) Create(ctx context.Context, id string, r io.Reader) (shoal.ObjectInfo, shoal.Sums, error) {
	w, err := s.CreateShards(ctx, id, r)
	if err != nil {
		return shoal.ObjectInfo{}, shoal.Sums{}, err
	}
	return w.Info, w.Sums, nil
}

// stripeBuf holds one stripe on its way to the shard writers: the K data
// chunks (contiguous) and M parity chunks, each followed by room for its
// crc. pending counts the writers that still have to send it.
type stripeBuf struct {
	mem     []byte   // (K+M) × (chunk+crc)
	shards  [][]byte // views of mem for this stripe: chunk+crc each
	pending atomic.Int32
}

// CreateShards encodes r stripe by stripe and streams shard i into
// Shards[i] (one goroutine and pipe per shard), with at most two stripes in
// memory. It returns once every shard is durable. If any shard store fails,
// the shards already written are removed and the error is of
// writeFailure's kind (KindExist if the object already exists); a failing
// reader gives the reader's error and leaves no shard either.
func (s *Store) CreateShards(ctx context.Context, id string, r io.Reader) (*Written, error) {
	const op = "ec.Create"
	if !shoal.ValidObjectID(id) {
		return nil, shoal.Errorf(op, shoal.KindInvalid, "bad object id %q", id)
	}
	release, err := claim(ctx, id)
	if err != nil {
		return nil, err
	}
	defer release()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	n := s.width()
	slot := s.chunk + CRCSize

	// Shard writers: each takes stripes from its channel and writes its
	// chunk into the pipe its shard store's Create reads from.
	pipes := make([]*io.PipeWriter, n)
	feeds := make([]chan *stripeBuf, n)
	free := make(chan *stripeBuf, 2)
	for range 2 {
		sb := &stripeBuf{mem: make([]byte, int64(n)*slot), shards: make([][]byte, n)}
		free <- sb
	}
	var failed atomic.Bool
	var foot []byte // set before feeds close
	results := make([]ShardInfo, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		pr, pw := io.Pipe()
		pipes[i], feeds[i] = pw, make(chan *stripeBuf, 2)
		wg.Go(func() {
			oi, sums, err := s.shards[i].Create(ctx, id, pr)
			if err == nil {
				results[i] = ShardInfo{Index: i, Size: oi.Size, Adler32: sums.Adler32}
			}
			errs[i] = err
			if err != nil {
				failed.Store(true)
				pr.CloseWithError(err)
			} else {
				pr.Close()
			}
		})
		hdr := header{K: s.k, M: s.m, Index: i, ChunkSize: s.chunk}.marshal()
		wg.Go(func() {
			_, werr := pw.Write(hdr)
			for sb := range feeds[i] {
				if werr == nil {
					_, werr = pw.Write(sb.shards[i])
				}
				if sb.pending.Add(-1) == 0 {
					free <- sb
				}
			}
			if werr == nil {
				_, werr = pw.Write(foot)
			}
			if werr != nil {
				failed.Store(true)
			}
			pw.Close() // after CloseWithError this is a no-op
		})
	}

	size, sums, rerr := s.encodeStream(ctx, r, free, feeds, &failed)
	if rerr == nil {
		var f footer
		f.Size, f.Adler32, f.MTime = size, sums.Adler32, time.Now()
		copy(f.MD5[:], sums.MD5)
		foot = f.marshal()
	} else {
		for _, pw := range pipes {
			pw.CloseWithError(rerr)
		}
	}
	for _, c := range feeds {
		close(c)
	}
	wg.Wait()

	// Success only if every shard is durable; otherwise remove ours.
	var exist bool
	for _, err := range errs {
		exist = exist || shoal.IsKind(err, shoal.KindExist)
	}
	if rerr == nil && shardErrors(errs) == "" {
		return &Written{Info: shoal.ObjectInfo{ID: id, Size: size, ModTime: time.Now()}, Sums: sums, Shards: results}, nil
	}
	cleanup := context.WithoutCancel(ctx)
	for i, err := range errs {
		if err == nil {
			s.shards[i].Remove(cleanup, id)
		}
	}
	switch {
	case rerr != nil && rerr != errShardFailed:
		return nil, rerr
	case exist:
		return nil, shoal.E(op, id, shoal.KindExist)
	default:
		return nil, shoal.Errorf(op, writeFailure(errs), "%s: could not write all %d shards: %s", id, n, shardErrors(errs))
	}
}

// errShardFailed aborts a Create whose shard stores did not all take it;
// the shard errors say why.
var errShardFailed = errors.New("ec: a shard store failed")

// encodeStream reads r a stripe at a time, encodes it and hands it to the
// shard writers. It returns the user size and sums, or the reason to abort
// (the reader's error, the context's, or a shard failure).
func (s *Store) encodeStream(ctx context.Context, r io.Reader, free chan *stripeBuf, feeds []chan *stripeBuf, failed *atomic.Bool) (int64, shoal.Sums, error) {
	const op = "ec.Create"
	n := s.width()
	slot := s.chunk + CRCSize
	stripeData := int64(s.k) * s.chunk
	ad, md := adler32.New(), md5.New()
	var size int64
	data := make([]byte, stripeData) // user bytes of the current stripe
	for {
		got, err := io.ReadFull(r, data)
		if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
			return 0, shoal.Sums{}, readErr(op, err)
		}
		if got == 0 {
			break
		}
		if failed.Load() {
			return 0, shoal.Sums{}, errShardFailed
		}
		var sb *stripeBuf
		select {
		case sb = <-free:
		case <-ctx.Done():
			return 0, shoal.Sums{}, shoal.E(op, shoal.KindTimeout, ctx.Err())
		}
		chunk := s.chunk
		if int64(got) < stripeData { // the last stripe: smaller chunks
			chunk = (int64(got) + int64(s.k) - 1) / int64(s.k)
		}
		for i := range n {
			sb.shards[i] = sb.mem[int64(i)*slot : int64(i)*slot+chunk+CRCSize]
		}
		scatter(sb.shards[:s.k], data[:got], chunk)
		sum(ad, md, data[:got])
		size += int64(got)
		views := make([][]byte, n)
		for i := range n {
			views[i] = sb.shards[i][:chunk]
		}
		if err := s.enc.Encode(views); err != nil {
			return 0, shoal.Sums{}, shoal.Errorf(op, shoal.KindOther, "encode: %v", err)
		}
		for i := range n {
			binary.LittleEndian.PutUint32(sb.shards[i][chunk:], crc32c(views[i]))
		}
		sb.pending.Store(int32(n))
		for i := range n {
			feeds[i] <- sb
		}
		if int64(got) < stripeData {
			break
		}
	}
	if failed.Load() {
		return 0, shoal.Sums{}, errShardFailed
	}
	return size, shoal.Sums{Adler32: ad.Sum32(), MD5: md.Sum(nil)}, nil
}

// scatter copies user bytes into K data chunks of chunk bytes each,
// zero-padding the tail.
func scatter(dst [][]byte, src []byte, chunk int64) {
	for i := range dst {
		c := dst[i][:chunk]
		n := copy(c, src)
		clear(c[n:])
		src = src[n:]
	}
}

func sum(ad, md hash.Hash, b []byte) {
	ad.Write(b)
	md.Write(b)
}

// readErr classifies a failure of the caller's reader: a *shoal.Error keeps
// its kind, a cancelled context is a timeout, anything else (client gone,
// short body) is the client's fault.
func readErr(op string, err error) error {
	var se *shoal.Error
	if errors.As(err, &se) {
		return shoal.E(op, err)
	}
	if isContextErr(err) {
		return shoal.E(op, shoal.KindTimeout, err)
	}
	return shoal.E(op, shoal.KindInvalid, err)
}
