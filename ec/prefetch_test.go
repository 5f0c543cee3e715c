package ec

import (
	"bytes"
	"io"
	"runtime"
	"testing"
)

// TestPrefetcherSmallSpan: a span smaller than the batch gets a buffer of
// its own size. A 64 KiB GET of an ec object used to allocate (and zero)
// a whole 8-stripe batch, 8 MiB, which made small ec GETs CPU-bound.
func TestPrefetcherSmallSpan(t *testing.T) {
	const span, batch = 64 << 10, 8 << 20
	data := bytes.Repeat([]byte("shoal"), span/5+1)[:span]
	read := func() {
		p := newPrefetcher(bytes.NewReader(data), io.NopCloser(nil), 0, span, batch)
		got, err := io.ReadAll(p)
		p.Close()
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("read %d bytes, %v", len(got), err)
		}
	}
	read() // warm up
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const n = 20
	for range n {
		read()
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per > 1<<20 {
		t.Fatalf("%d bytes allocated per %d-byte read, want under 1 MiB", per, span)
	}
}
