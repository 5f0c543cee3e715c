package diskserver

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/valyala/fasthttp"

	"shoal/storetest"
)

// BenchmarkGet1MiB fetches a 1 MiB object through the HTTP server over
// loopback with a fasthttp client (whole-file GET: the sendfile path).
func BenchmarkGet1MiB(b *testing.B) {
	ts := startServer(b, Options{})
	data := storetest.Data(1, 1<<20)
	if _, _, err := ts.Store().Create(context.Background(), "be4c", bytes.NewReader(data)); err != nil {
		b.Fatal(err)
	}
	url := ts.signed("GET", "be4c", "")
	c := &fasthttp.Client{}
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		req.SetRequestURI(url)
		if err := c.Do(req, resp); err != nil {
			b.Fatal(err)
		}
		if resp.StatusCode() != 200 || len(resp.Body()) != len(data) {
			b.Fatalf("GET = %d, %d bytes", resp.StatusCode(), len(resp.Body()))
		}
	}
}

// BenchmarkPackScan measures what a data directory of packed objects
// costs at start: the scan of their headers and the index in memory.
// PACK_SCAN_N objects (default 20,000) of 16 KiB, half of them then
// removed (holes the scan skips). Reported per live object.
// PACK_SCAN_COLD=1 drops the page cache before each scan (root only).
// PACK_SCAN_INDEX=1 starts from the index a clean stop writes instead.
func BenchmarkPackScan(b *testing.B) {
	n := 20000
	if v, err := strconv.Atoi(os.Getenv("PACK_SCAN_N")); err == nil && v > 0 {
		n = v
	}
	dir := b.TempDir()
	s, err := NewStore([]string{dir}, -1)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	data := storetest.Data(1, 16<<10)
	ids := make(chan int, n)
	for i := range n {
		ids <- i
	}
	close(ids)
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			for i := range ids {
				id := fmt.Sprintf("%08x", i)
				if _, _, err := s.CreateStaged(ctx, id, bytes.NewReader(data), int64(len(data))); err != nil {
					b.Error(err)
					return
				}
				if err := s.Publish(ctx, id); err != nil {
					b.Error(err)
					return
				}
				if i%2 == 1 {
					s.Remove(ctx, id)
				}
			}
		})
	}
	wg.Wait()
	live := n - n/2
	var index []byte
	indexPath := filepath.Join(dir, packsDir, indexName)
	if os.Getenv("PACK_SCAN_INDEX") != "" {
		if err := s.FlushStaged(); err != nil {
			b.Fatal(err)
		}
		if index, err = os.ReadFile(indexPath); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	var heap uint64
	for b.Loop() {
		var m0, m1 runtime.MemStats
		if index != nil {
			b.StopTimer()
			if err := os.WriteFile(indexPath, index, 0o600); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		if os.Getenv("PACK_SCAN_COLD") != "" {
			// From the disk, not the page cache (needs root).
			b.StopTimer()
			if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("3"), 0); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		runtime.GC()
		runtime.ReadMemStats(&m0)
		s2, err := NewStore([]string{dir}, -1)
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&m1)
		heap = m1.HeapAlloc - m0.HeapAlloc
		if !s2.disks[0].packs.has(fmt.Sprintf("%08x", 0)) {
			b.Fatal("object 0 not indexed")
		}
		if index != nil && s2.disks[0].packs.scanned != 0 {
			b.Fatal("the index was not used")
		}
		runtime.KeepAlive(s2)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(live), "ns/object")
	b.ReportMetric(float64(heap)/float64(live), "heap-B/object")
}
