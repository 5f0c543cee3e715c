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

// SetMulti refuses a bad key before it sends anything, reports what
// memcached refuses (a value over its item size) without leaving the
// connection out of step, and fails, as Set does, with memcached down.
func TestSetMultiRefusals(t *testing.T) {
	mc := testsvc.StartMemcached(t)
	c := newCache(t, mc.Addr)
	ctx := t.Context()
	good := fmt.Sprint("setmulti-", time.Now().UnixNano())
	err := c.SetMulti(ctx, []string{good, "has space"}, [][]byte{[]byte("a"), []byte("b")}, 0)
	if !shoal.IsKind(err, shoal.KindInvalid) {
		t.Fatalf("SetMulti with a bad key: %v, want KindInvalid", err)
	}
	if _, err := c.Get(ctx, good); !shoal.IsKind(err, shoal.KindNotFound) {
		t.Fatalf("the good key of a refused SetMulti: %v, want not stored", err)
	}
	huge := make([]byte, 2<<20) // memcached's item size is 1 MiB by default
	err = c.SetMulti(ctx, []string{good + "h", good}, [][]byte{huge, []byte("after")}, 0)
	if !shoal.IsKind(err, shoal.KindUnavailable) {
		t.Fatalf("SetMulti of a 2 MiB value: %v, want KindUnavailable", err)
	}
	// Every pooled connection answers its own requests (GetInto shares
	// SetMulti's connections: a reply left unread would answer it).
	vals := make([][]byte, 1)
	for i := range 20 {
		k := fmt.Sprint(good, "-", i)
		if err := c.SetMulti(ctx, []string{k}, [][]byte{[]byte(k)}, 0); err != nil {
			t.Fatalf("SetMulti after a refusal: %v", err)
		}
		if err := c.GetInto(ctx, []string{k}, vals); err != nil || string(vals[0]) != k {
			t.Fatalf("GetInto(%s) after a refusal = %q, %v", k, vals[0], err)
		}
	}
	mc.Kill()
	if err := c.SetMulti(ctx, []string{good}, [][]byte{[]byte("x")}, 0); !shoal.IsKind(err, shoal.KindUnavailable) {
		t.Fatalf("SetMulti with memcached down: %v, want KindUnavailable", err)
	}
}
