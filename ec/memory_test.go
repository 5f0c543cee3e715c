package ec

import (
	"context"
	"crypto/md5"
	"hash/adler32"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"shoal/storetest"
)

// TestMemoryBounded streams 256 MiB through Create and back through
// ReadAt and through the streamed GET reader, and checks that the heap stays far below the file size: memory
// is bounded by stripes, not the file.
func TestMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 384 MiB of shards")
	}
	const size = 256 << 20
	const limit = 48 << 20
	s := newLocal(t, 4, 2, 0)
	ctx := context.Background()
	runtime.GC()
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	})
	ad, md := adler32.New(), md5.New()
	info, sums, err := s.Create(ctx, "b16", io.TeeReader(io.TeeReader(storetest.Gen(size), ad), md))
	if err != nil {
		t.Fatal(err)
	}
	if info.Size != size || sums.Adler32 != ad.Sum32() || string(sums.MD5) != string(md.Sum(nil)) {
		t.Fatalf("size %d adler %08x md5 %x; want %d %08x %x", info.Size, sums.Adler32, sums.MD5, size, ad.Sum32(), md.Sum(nil))
	}
	obj, err := s.Open(ctx, "b16")
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	rd := io.NewSectionReader(obj, 0, obj.Size())
	back := adler32.New()
	if n, err := io.CopyBuffer(back, rd, make([]byte, 3<<20)); err != nil || n != size {
		t.Fatalf("read back %d bytes: %v", n, err)
	}
	// And through the streamed GET path (one reader per data shard).
	obj2, err := s.Open(ctx, "b16")
	if err != nil {
		t.Fatal(err)
	}
	body := NewReader(obj2, 0, obj2.Size())
	if _, ok := body.(*stripeStream); !ok {
		t.Fatalf("a %d MiB GET is read by %T, not streamed", size>>20, body)
	}
	streamed := adler32.New()
	if n, err := io.Copy(streamed, body); err != nil || n != size {
		t.Fatalf("streamed %d bytes: %v", n, err)
	}
	body.Close()
	close(stop)
	wg.Wait()
	if back.Sum32() != ad.Sum32() {
		t.Errorf("read back adler32 %08x, want %08x", back.Sum32(), ad.Sum32())
	}
	if streamed.Sum32() != ad.Sum32() {
		t.Errorf("streamed adler32 %08x, want %08x", streamed.Sum32(), ad.Sum32())
	}
	t.Logf("peak HeapInuse %.1f MiB for a %d MiB file", float64(peak.Load())/(1<<20), size>>20)
	if peak.Load() > limit {
		t.Errorf("peak HeapInuse %d MiB, want under %d MiB", peak.Load()>>20, limit>>20)
	}
}
