package ec

import (
	"bytes"
	"context"
	"io"

	"shoal"
)

// openSpan returns a reader of the n bytes at off of shard i's object: one
// streaming ranged read where the shard store has it (shoal.RangeOpener:
// a remote data server's Range GET), plain reads at offsets on any other
// store. Closing it ends the read.
func (o *object) openSpan(ctx context.Context, i int, off, n int64) (io.ReadCloser, error) {
	// The head read at open holds the start of the span when it is the
	// first stripe's chunk.
	if h, ok := o.objs[i].(*headObject); ok && off < int64(len(h.head)) {
		prefix := h.head[off:min(off+n, int64(len(h.head)))]
		if int64(len(prefix)) == n {
			return io.NopCloser(bytes.NewReader(prefix)), nil
		}
		rest, err := o.openSpan(ctx, i, off+int64(len(prefix)), n-int64(len(prefix)))
		if err != nil {
			return nil, err
		}
		return struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(prefix), rest), rest}, nil
	}
	if ro, ok := o.s.shards[i].(shoal.RangeOpener); ok {
		return ro.OpenRange(ctx, o.id, off, n)
	}
	return io.NopCloser(io.NewSectionReader(o.objs[i], off, n)), nil
}
