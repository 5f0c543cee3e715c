package cache_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"shoal"
	"shoal/cache"
	"shoal/cache/memcache"
	"shoal/cache/memory"
	"shoal/catalog"
	"shoal/catalog/catalogtest"
	"shoal/internal/testsvc"
)

func TestMain(m *testing.M) { testsvc.Main(m) }

func sqliteDSN(t testing.TB) string {
	return "sqlite:" + filepath.Join(t.TempDir(), "catalog.db")
}

// openSQLite opens a fresh SQLite catalog file, closed at test end.
func openSQLite(t testing.TB) (*catalog.DB, string) {
	t.Helper()
	dsn := sqliteDSN(t)
	return openDSN(t, dsn), dsn
}

func openDSN(t testing.TB, dsn string) *catalog.DB {
	t.Helper()
	db, err := catalog.Open(context.Background(), catalog.Options{DSN: dsn})
	if err != nil {
		t.Fatalf("catalog.Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func newMemcache(t testing.TB, addrs ...string) *memcache.Cache {
	t.Helper()
	mc, err := memcache.New(memcache.Options{Servers: addrs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mc.Close() })
	return mc
}

var prefixes atomic.Int64

// uniquePrefix keeps catalogs that share one memcached apart, as the suite
// wants a fresh catalog per test.
func uniquePrefix() string {
	return fmt.Sprintf("t%d-%d:", time.Now().UnixNano(), prefixes.Add(1))
}

func TestConformance(t *testing.T) {
	addr := testsvc.Memcached(t)
	tiers := []struct {
		name string
		opts func(t *testing.T) cache.Options
	}{
		{"L1", func(t *testing.T) cache.Options { return cache.Options{L1: true} }},
		{"L1sole", func(t *testing.T) cache.Options { return cache.Options{L1: true, SoleMD: true} }},
		{"L2memory", func(t *testing.T) cache.Options { return cache.Options{L2: memory.New(0)} }},
		{"L2memcached", func(t *testing.T) cache.Options {
			return cache.Options{L2: newMemcache(t, addr), KeyPrefix: uniquePrefix()}
		}},
		{"L1+L2memcached", func(t *testing.T) cache.Options {
			return cache.Options{L1: true, L2: newMemcache(t, addr), KeyPrefix: uniquePrefix()}
		}},
	}
	for _, tier := range tiers {
		t.Run(tier.name, func(t *testing.T) {
			catalogtest.Run(t, func(t *testing.T) shoal.Catalog {
				db, _ := openSQLite(t)
				return cache.NewCatalog(db, tier.opts(t))
			})
		})
	}
}
