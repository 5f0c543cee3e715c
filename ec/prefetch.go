package ec

import (
	"io"
	"sync"
)

// prefetcher streams [off, end) of an object, reading the next batch of
// stripes while the current one is being sent, so the shard fetches and the
// client's transfer overlap. It holds at most depth+1 batches.
type prefetcher struct {
	ch   chan batch
	free chan []byte // buffers back from the reader side
	stop chan struct{}
	once sync.Once
	cur  batch
	obj  io.Closer
	wg   sync.WaitGroup
}

type batch struct {
	buf []byte // the whole buffer, to recycle
	b   []byte // what is left to read
	err error
}

const prefetchDepth = 2

func newPrefetcher(r io.ReaderAt, c io.Closer, off, end int64, batchSize int) *prefetcher {
	// A buffer larger than the span would only be zeroed for nothing: a
	// 64 KiB GET must not allocate (and clear) a batch of 8 stripes.
	if end > off && end-off < int64(batchSize) {
		batchSize = int(end - off)
	}
	p := &prefetcher{ch: make(chan batch, prefetchDepth), free: make(chan []byte, prefetchDepth+2), stop: make(chan struct{}), obj: c}
	p.wg.Go(func() {
		defer close(p.ch)
		for off < end {
			var buf []byte
			select {
			case buf = <-p.free:
			default:
				buf = make([]byte, batchSize)
			}
			buf = buf[:min(int64(batchSize), end-off)]
			n, err := r.ReadAt(buf, off)
			if err == io.EOF && n == len(buf) {
				err = nil
			}
			off += int64(n)
			select {
			case p.ch <- batch{buf[:cap(buf)], buf[:n], err}:
			case <-p.stop:
				return
			}
			if err != nil {
				return
			}
		}
	})
	return p
}

func (p *prefetcher) Read(b []byte) (int, error) {
	for len(p.cur.b) == 0 {
		if p.cur.err != nil {
			return 0, p.cur.err
		}
		if p.cur.buf != nil {
			select {
			case p.free <- p.cur.buf:
			default:
			}
		}
		next, ok := <-p.ch
		if !ok {
			return 0, io.EOF
		}
		p.cur = next
	}
	n := copy(b, p.cur.b)
	p.cur.b = p.cur.b[n:]
	return n, nil
}

// Close stops the read-ahead and closes the object.
func (p *prefetcher) Close() error {
	p.once.Do(func() { close(p.stop) })
	p.wg.Wait()
	return p.obj.Close()
}
