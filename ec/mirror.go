package ec

import (
	"context"
	"io"
	"sync"

	"shoal"
)

// Mirror is a shoal.BlobStore over N stores that each hold a full copy of
// every object: the replica:N layout. md sends replica:N (N > 1) PUTs
// through a gw so that the client's one upload becomes N durable copies
// before the answer; reads go straight to one data server.
//
// Create needs every store (no degraded writes): otherwise it fails (of
// writeFailure's kind) and removes the copies it made. Open reads the first
// copy it can open. Remove removes every copy it can reach (KindUnavailable
// for the others, to be retried). Walk is the union.
type Mirror struct {
	stores []shoal.BlobStore
}

var _ shoal.BlobStore = (*Mirror)(nil)

// NewMirror returns a Mirror over stores (at least one, none nil).
func NewMirror(stores []shoal.BlobStore) (*Mirror, error) {
	if len(stores) == 0 || len(stores) > 16 {
		return nil, shoal.Errorf("ec.NewMirror", shoal.KindInvalid, "replica:N needs 1..16 stores, got %d", len(stores))
	}
	for i, s := range stores {
		if s == nil {
			return nil, shoal.Errorf("ec.NewMirror", shoal.KindInvalid, "store %d is nil", i)
		}
	}
	return &Mirror{stores: stores}, nil
}

// Layout is replica:N.
func (m *Mirror) Layout() shoal.Layout {
	return shoal.Layout{Kind: shoal.LayoutReplica, N: len(m.stores)}
}

func (m *Mirror) each(fn func(i int) error) []error {
	errs := make([]error, len(m.stores))
	var wg sync.WaitGroup
	for i := range m.stores {
		wg.Go(func() { errs[i] = fn(i) })
	}
	wg.Wait()
	return errs
}

// Create implements shoal.BlobStore.
func (m *Mirror) Create(ctx context.Context, id string, r io.Reader) (shoal.ObjectInfo, shoal.Sums, error) {
	w, err := m.CreateShards(ctx, id, r)
	if err != nil {
		return shoal.ObjectInfo{}, shoal.Sums{}, err
	}
	return w.Info, w.Sums, nil
}

// CreateShards streams r to every store at once (one pipe each, so memory
// is one read buffer, not the file) and returns once every copy is
// durable, with one ShardInfo per copy (Index = store index). A failing
// store or reader removes the copies already made.
func (m *Mirror) CreateShards(ctx context.Context, id string, r io.Reader) (*Written, error) {
	const op = "ec.Mirror.Create"
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
	n := len(m.stores)
	pipes := make([]*io.PipeWriter, n)
	readers := make([]*io.PipeReader, n)
	for i := range n {
		readers[i], pipes[i] = io.Pipe()
	}
	infos := make([]shoal.ObjectInfo, n)
	sums := make([]shoal.Sums, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			infos[i], sums[i], errs[i] = m.stores[i].Create(ctx, id, readers[i])
			readers[i].CloseWithError(errOrEOF(errs[i]))
		})
	}
	// Copy r to every pipe; a store that failed stops taking bytes (its
	// pipe reader is closed), which fails the whole write.
	ws := make([]io.Writer, n)
	for i, p := range pipes {
		ws[i] = p
	}
	buf := make([]byte, 256<<10)
	_, rerr := io.CopyBuffer(io.MultiWriter(ws...), r, buf)
	for _, p := range pipes {
		if rerr != nil {
			p.CloseWithError(rerr)
		} else {
			p.Close()
		}
	}
	wg.Wait()
	failed := shardErrors(errs)
	if rerr == nil && failed == "" {
		w := &Written{Info: infos[0], Sums: sums[0]}
		for i := range n {
			w.Shards = append(w.Shards, ShardInfo{Index: i, Size: infos[i].Size, Adler32: sums[i].Adler32})
		}
		return w, nil
	}
	exist := false
	for i, err := range errs {
		if err == nil {
			m.stores[i].Remove(context.WithoutCancel(ctx), id)
		} else if shoal.IsKind(err, shoal.KindExist) {
			exist = true
		}
	}
	switch {
	case exist:
		return nil, shoal.Errorf(op, shoal.KindExist, "%s exists", id)
	case failed != "" && !isPipeErr(rerr, errs):
		return nil, shoal.Errorf(op, writeFailure(errs), "%s: writing copies: %s", id, failed)
	case rerr != nil:
		return nil, shoal.E(op, id, rerr)
	}
	return nil, shoal.Errorf(op, writeFailure(errs), "%s: writing copies: %s", id, failed)
}

// isPipeErr reports whether the copy error is only the echo of a store's
// failure (its pipe closed), so the store's error is the one to report.
func isPipeErr(rerr error, errs []error) bool {
	if rerr == nil {
		return false
	}
	for _, err := range errs {
		if err != nil && (rerr == err || rerr.Error() == err.Error()) {
			return false
		}
	}
	return rerr == io.ErrClosedPipe
}

func errOrEOF(err error) error {
	if err == nil {
		return io.ErrClosedPipe // the store is done: further writes fail
	}
	return err
}

// Open implements shoal.BlobStore: the first copy that opens.
func (m *Mirror) Open(ctx context.Context, id string) (shoal.Object, error) {
	if !shoal.ValidObjectID(id) {
		return nil, shoal.Errorf("ec.Mirror.Open", shoal.KindInvalid, "bad object id %q", id)
	}
	var first error
	for _, s := range m.stores {
		obj, err := s.Open(ctx, id)
		if err == nil {
			return obj, nil
		}
		if first == nil || shoal.IsKind(first, shoal.KindNotFound) {
			first = err
		}
	}
	return nil, first
}

// OpenAt is Open: a copy is read where the range asks.
func (m *Mirror) OpenAt(ctx context.Context, id string, _ int64) (shoal.Object, error) {
	return m.Open(ctx, id)
}

// Remove implements shoal.BlobStore.
func (m *Mirror) Remove(ctx context.Context, id string) error {
	if !shoal.ValidObjectID(id) {
		return shoal.Errorf("ec.Mirror.Remove", shoal.KindInvalid, "bad object id %q", id)
	}
	errs := m.each(func(i int) error {
		if err := m.stores[i].Remove(ctx, id); err != nil && !shoal.IsKind(err, shoal.KindNotFound) {
			return err
		}
		return nil
	})
	if msg := shardErrors(errs); msg != "" {
		return shoal.Errorf("ec.Mirror.Remove", shoal.KindUnavailable, "%s: some copies not removed: %s", id, msg)
	}
	return nil
}

// Walk implements shoal.BlobStore: each object once; a store that cannot
// list is an error only if no store can.
func (m *Mirror) Walk(ctx context.Context, fn func(shoal.ObjectInfo) error) error {
	var mu sync.Mutex
	seen := map[string]shoal.ObjectInfo{}
	errs := m.each(func(i int) error {
		return m.stores[i].Walk(ctx, func(oi shoal.ObjectInfo) error {
			mu.Lock()
			seen[oi.ID] = oi
			mu.Unlock()
			return nil
		})
	})
	failed := 0
	for _, err := range errs {
		if err != nil {
			failed++
		}
	}
	if failed == len(errs) {
		return shoal.Errorf("ec.Mirror.Walk", shoal.KindUnavailable, "%s", shardErrors(errs))
	}
	for _, oi := range seen {
		if err := fn(oi); err != nil {
			return err
		}
	}
	return nil
}

// Space implements shoal.BlobStore: what fits on every copy.
func (m *Mirror) Space(ctx context.Context) (shoal.Space, error) {
	spaces := make([]shoal.Space, len(m.stores))
	errs := m.each(func(i int) error {
		var err error
		spaces[i], err = m.stores[i].Space(ctx)
		return err
	})
	if msg := shardErrors(errs); msg != "" {
		return shoal.Space{}, shoal.Errorf("ec.Mirror.Space", shoal.KindUnavailable, "%s", msg)
	}
	out := spaces[0]
	for _, sp := range spaces[1:] {
		out.Free, out.Total = min(out.Free, sp.Free), min(out.Total, sp.Total)
	}
	return out, nil
}
