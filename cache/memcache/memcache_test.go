package memcache_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"testing"

	"shoal"
	"shoal/cache/cachetest"
	"shoal/cache/memcache"
	"shoal/internal/testsvc"
)

func newCache(t *testing.T, servers ...string) *memcache.Cache {
	t.Helper()
	c, err := memcache.New(memcache.Options{Servers: servers})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestConformance(t *testing.T) {
	addr := testsvc.Memcached(t)
	cachetest.Run(t, func(t *testing.T) shoal.Cache { return newCache(t, addr) })
}

// Keys spread over several servers; the suite holds across them.
func TestConformanceTwoServers(t *testing.T) {
	a, b := testsvc.Memcached(t), testsvc.Memcached(t)
	cachetest.Run(t, func(t *testing.T) shoal.Cache { return newCache(t, a, b) })
}

func TestKeysSpreadOverServers(t *testing.T) {
	a, b := testsvc.Memcached(t), testsvc.Memcached(t)
	both := newCache(t, a, b)
	onA, onB := newCache(t, a), newCache(t, b)
	ctx := t.Context()
	var hitsA, hitsB int
	for i := 0; i < 100; i++ {
		k := fmt.Sprint("spread-", i)
		if err := both.Set(ctx, k, []byte("v"), 0); err != nil {
			t.Fatal(err)
		}
		_, errA := onA.Get(ctx, k)
		_, errB := onB.Get(ctx, k)
		if (errA == nil) == (errB == nil) {
			t.Fatalf("key %q on both or neither server: %v, %v", k, errA, errB)
		}
		if errA == nil {
			hitsA++
		} else {
			hitsB++
		}
	}
	if hitsA == 0 || hitsB == 0 {
		t.Errorf("keys per server: %d and %d; want both used", hitsA, hitsB)
	}
}

func TestBreakerSkipsDeadServerThenRecovers(t *testing.T) {
	p := testsvc.StartMemcached(t)
	c, err := memcache.New(memcache.Options{Servers: []string{p.Addr}, BreakerThreshold: 2, BreakerBackoff: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := c.Set(ctx, "k", []byte("v"), 0); err != nil {
		t.Fatal(err)
	}
	p.Kill()
	for i := 0; i < 2; i++ {
		if _, err := c.Get(ctx, "k"); !shoal.IsKind(err, shoal.KindUnavailable) {
			t.Fatalf("Get on a dead server: %v, want KindUnavailable", err)
		}
	}
	_, err = c.GetMulti(ctx, []string{"k"})
	if !shoal.IsKind(err, shoal.KindUnavailable) || !strings.Contains(err.Error(), "skipped") {
		t.Fatalf("GetMulti with the breaker open: %v, want it skipped", err)
	}
	p.Restart()
	if err := c.Set(ctx, "k", []byte("again"), 0); err != nil {
		t.Fatalf("Set is always attempted, even with the breaker open: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		v, err := c.Get(ctx, "k")
		if err == nil {
			if string(v) != "again" {
				t.Fatalf("Get = %q", v)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("memcached back for 5s, Get still fails: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// BenchmarkGet is one memcached get per op: the ceiling for an L2 hit.
func BenchmarkGet(b *testing.B) {
	c, err := memcache.New(memcache.Options{Servers: []string{testsvc.Memcached(b)}})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	c.Set(ctx, "k", make([]byte, 100), 0)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Get(ctx, "k"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGetMulti4 fetches 4 keys (a Stat at depth 3) per op.
func BenchmarkGetMulti4(b *testing.B) {
	c, err := memcache.New(memcache.Options{Servers: []string{testsvc.Memcached(b)}})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	keys := []string{"a", "b", "c", "d"}
	for _, k := range keys {
		c.Set(ctx, k, make([]byte, 100), 0)
	}
	b.ReportAllocs()
	for b.Loop() {
		if m, err := c.GetMulti(ctx, keys); err != nil || len(m) != 4 {
			b.Fatal(err)
		}
	}
}
