package cache_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"shoal"
	"shoal/cache"
	"shoal/internal/testsvc"
)

// memcached killed with -9 under a concurrent Stat load: no caller sees an
// error; once it is back, L2 hits resume.
func TestMemcachedKilledUnderLoad(t *testing.T) {
	mc := testsvc.StartMemcached(t)
	db, _ := openSQLite(t)
	c := cache.NewCatalog(db, cache.Options{L2: newMemcache(t, mc.Addr)})
	ctx := context.Background()
	const files = 50
	if _, err := c.Mkdir(ctx, "/d", mtime); err != nil {
		t.Fatal(err)
	}
	paths := make([]string, files)
	for i := range paths {
		paths[i] = fmt.Sprintf("/d/f%d", i)
		if _, err := c.PutInline(ctx, paths[i], []byte("x"), shoal.Sums{}, mtime, shoal.Condition{}, grace); err != nil {
			t.Fatal(err)
		}
	}

	const workers, perWorker, maxTime = 4, 5000, 2 * time.Second
	var ops, failures atomic.Int64
	var firstErr atomic.Value
	stop := time.Now().Add(maxTime)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := 0; i < perWorker && time.Now().Before(stop); i++ {
				p := paths[(w*7+i)%files]
				e, err := c.Stat(ctx, p)
				ops.Add(1)
				if err != nil || e.Path != p {
					failures.Add(1)
					firstErr.CompareAndSwap(nil, fmt.Sprintf("Stat(%s) = %v, %v", p, e, err))
				}
			}
		})
	}
	for ops.Load() < 200 && time.Now().Before(stop) {
		time.Sleep(5 * time.Millisecond)
	}
	hitsBeforeKill := c.Stats().L2.Hits
	mc.Kill()
	wg.Wait()
	st := c.Stats()
	t.Logf("%d Stats, %d failed; stats %+v", ops.Load(), failures.Load(), st)
	if failures.Load() != 0 {
		t.Fatalf("%d of %d Stats failed; first: %v", failures.Load(), ops.Load(), firstErr.Load())
	}
	if hitsBeforeKill == 0 {
		t.Fatal("no L2 hits before memcached was killed: the test proved nothing")
	}
	if st.L2.Errors == 0 {
		t.Fatal("no L2 errors counted: memcached was not used after the kill")
	}

	mc.Restart()
	hits := c.Stats().L2.Hits
	deadline := time.Now().Add(10 * time.Second)
	for c.Stats().L2.Hits <= hits {
		if time.Now().After(deadline) {
			t.Fatalf("no L2 hit within 10s of memcached's restart: %+v", c.Stats())
		}
		for _, p := range paths[:5] {
			if _, err := c.Stat(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
}
