package storetest

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"

	"shoal"
)

// testDeferred checks the optional shoal.DeferredStager: a deferred
// create is staged when it returns (listed, not opened), durable
// succeeds, and once published it is an object like any other, bytes
// exact; concurrent deferred creates, each made durable, all land.
// Settled succeeds on a store with nothing to settle.
func testDeferred(t *testing.T, s shoal.BlobStore) {
	ds, ok := s.(shoal.DeferredStager)
	if !ok {
		return // optional: md then waits for CreateStaged's own sync
	}
	ctx := context.Background()
	data := Data(6, 30_000)
	info, sums, durable, err := ds.CreateStagedDeferred(ctx, "e1", bytes.NewReader(data), int64(len(data)))
	if err != nil || info.Size != int64(len(data)) {
		t.Fatalf("CreateStagedDeferred: %+v %v", info, err)
	}
	_, err = s.Open(ctx, "e1")
	wantKind(t, "Open of a deferred create before its publish", err, shoal.KindNotFound)
	if ids, err := ds.Staged(ctx); err != nil || !sameSet(ids, "e1") {
		t.Errorf("Staged = %v, %v; want e1", ids, err)
	}
	if err := whenDurable(durable); err != nil {
		t.Fatal(err)
	}
	if err := ds.Publish(ctx, "e1"); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, s, "e1"); !bytes.Equal(got, data) || sums.Adler32 == 0 {
		t.Errorf("published deferred create: %d bytes, want its %d", len(got), len(data))
	}

	const n = 32
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			d := Data(uint64(100+i), 500+i*900)
			_, _, durable, err := ds.CreateStagedDeferred(ctx, fmt.Sprintf("f%03x", i), bytes.NewReader(d), int64(len(d)))
			if err == nil {
				err = whenDurable(durable)
			}
			if err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent CreateStagedDeferred: %v", err)
	}
	if ids, _ := ds.Staged(ctx); len(ids) != n {
		t.Errorf("%d deferred creates, Staged lists %d", n, len(ids))
	}
	if err := ds.Settled(); err != nil {
		t.Errorf("Settled: %v", err)
	}
}

// whenDurable waits for a deferred create's durability: nil says it was
// durable on return.
func whenDurable(durable func() error) error {
	if durable == nil {
		return nil
	}
	return durable()
}
