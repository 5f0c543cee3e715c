package ec

import (
	"context"
	"io"
	"sync"

	"shoal"
)

// HeadSize is how much of a shard object opening it reads at once: the
// whole shard of a file of one default stripe (1 MiB at K=4, so every small
// file), or the header and the first chunk of a larger one, which the
// first stripe read then takes from memory. On a remote data server that is
// one Range GET, which also tells the object's size: no HEAD, no separate
// header and footer reads (shoal.HeadOpener).
const HeadSize = DefaultStripeSize/4 + HeaderSize + CRCSize + FooterSize

// headObject is a shard object whose first bytes are in memory. Reads
// within them cost nothing; others go to rest (nil when head is the whole
// object).
type headObject struct {
	head   []byte
	size   int64
	rest   shoal.Object
	pooled bool // head came from the chunk buffer pool

	mu     sync.Mutex
	closed bool
}

func (h *headObject) Size() int64 { return h.size }

func (h *headObject) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, shoal.Errorf("ec.ReadAt", shoal.KindInvalid, "negative offset")
	}
	if end := off + int64(len(p)); end <= int64(len(h.head)) || h.rest == nil {
		if off >= int64(len(h.head)) {
			return 0, io.EOF
		}
		n := copy(p, h.head[off:])
		if n < len(p) {
			return n, io.EOF
		}
		return n, nil
	}
	return h.rest.ReadAt(p, off)
}

// Close releases the head; a second Close does nothing (the buffer must go
// back to the pool once).
func (h *headObject) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil
	}
	h.closed = true
	if h.pooled {
		putChunkBuf(h.head[:cap(h.head)])
	}
	h.head = nil
	if h.rest != nil {
		return h.rest.Close()
	}
	return nil
}

// headFor is the head to read when opening shards for reads from user
// offset off on: the whole HeadSize when it may hold the data asked for
// (each shard's head holds at most HeadSize of its chunks, and user offset
// off lies at shard offset off/K or beyond), else just the header, so a
// small Range deep in a large file does not pull K heads it never uses.
func (s *Store) headFor(off int64) int {
	if off/int64(s.k) >= HeadSize {
		return HeaderSize
	}
	return HeadSize
}

// openShard opens shard i of id with its first headLen (≤ HeadSize) bytes
// read: in one request where the store can (shoal.HeadOpener: a remote
// data server's Range GET, which also tells the size), else Open and one
// read.
func (s *Store) openShard(ctx context.Context, i int, id string, headLen int) (*headObject, error) {
	buf := getChunkBuf(HeadSize)
	var obj shoal.Object
	var n int
	var err error
	if ho, ok := s.shards[i].(shoal.HeadOpener); ok {
		obj, n, err = ho.OpenHead(ctx, id, buf[:headLen])
	} else if obj, err = s.shards[i].Open(ctx, id); err == nil {
		n = int(min(obj.Size(), int64(headLen)))
		err = readFull(obj, buf[:n], 0)
	}
	if err != nil {
		putChunkBuf(buf)
		if obj != nil {
			obj.Close()
		}
		return nil, err
	}
	h := &headObject{head: buf[:n], size: obj.Size(), rest: obj, pooled: true}
	if h.size <= int64(n) {
		h.rest = nil
		obj.Close()
	}
	return h, nil
}
