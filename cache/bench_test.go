package cache_test

import (
	"context"
	"testing"
	"time"

	"shoal"
	"shoal/cache"
	"shoal/internal/testsvc"
)

// benchStat stats one file at depth 3 through c, after one warming Stat.
func benchStat(b *testing.B, c shoal.Catalog) {
	ctx := context.Background()
	for _, d := range []string{"/a", "/a/b"} {
		if _, err := c.Mkdir(ctx, d, mtime); err != nil {
			b.Fatal(err)
		}
	}
	const path = "/a/b/file"
	if _, err := c.PutInline(ctx, path, []byte("data"), shoal.Sums{Adler32: 1}, mtime, shoal.Condition{}, grace); err != nil {
		b.Fatal(err)
	}
	if _, err := c.Stat(ctx, path); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Stat(ctx, path); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStatL1Hit(b *testing.B) {
	db, _ := openSQLite(b)
	c := cache.NewCatalog(db, cache.Options{L1: true, L1TTL: time.Hour}) // no expiry mid-run
	benchStat(b, c)
	if st := c.Stats(); st.L1.Hits < uint64(b.N) {
		b.Fatalf("L1 hits %d < %d", st.L1.Hits, b.N)
	}
}

func BenchmarkStatL2Hit(b *testing.B) {
	db, _ := openSQLite(b)
	c := cache.NewCatalog(db, cache.Options{L2: newMemcache(b, testsvc.Memcached(b))})
	benchStat(b, c)
	if st := c.Stats(); st.L2.Hits < uint64(b.N) {
		b.Fatalf("L2 hits %d < %d", st.L2.Hits, b.N)
	}
}

// BenchmarkStatMiss is the SQLite catalog alone, behind a decorator with
// no tier.
func BenchmarkStatMiss(b *testing.B) {
	db, _ := openSQLite(b)
	benchStat(b, cache.NewCatalog(db, cache.Options{}))
}
