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
	"shoal/catalog"
)

func layout(t *testing.T, s string) shoal.Layout {
	t.Helper()
	l, err := shoal.ParseLayout(s)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// With SoleMD, the pool of a new file is answered in process while no
// directory is mapped to a pool, and a mapping or a new default layout is
// seen as soon as it is made.
func TestSoleMDKnowsNoDirectoryIsMapped(t *testing.T) {
	ctx := context.Background()
	db, _ := openSQLite(t)
	c := cache.NewCatalog(db, cache.Options{L1: true, SoleMD: true})
	poolOf := func(path string) shoal.Pool {
		t.Helper()
		p, err := c.PoolFor(ctx, path)
		if err != nil {
			t.Fatalf("PoolFor(%s): %v", path, err)
		}
		return p
	}
	quiet := func(what, want string) {
		t.Helper()
		if n := fewestTrips(db, func() {
			for i := range 50 {
				if p := poolOf(fmt.Sprintf("/d/f%d", i)); p.Name != shoal.DefaultPool || p.Layout.String() != want {
					t.Fatalf("%s: pool %s %s, want default %s", what, p.Name, p.Layout, want)
				}
			}
		}); n != 0 {
			t.Errorf("%s: 50 PoolFor asked the catalog %d times, want 0", what, n)
		}
	}
	def := poolOf("/d/f").Layout.String()
	quiet("no mapping", def)

	if err := c.PutPool(ctx, shoal.Pool{Name: shoal.DefaultPool, Layout: layout(t, "replica:2")}); err != nil {
		t.Fatal(err)
	}
	if p := poolOf("/d/f"); p.Layout.String() != "replica:2" {
		t.Fatalf("after PutPool default replica:2: %s", p.Layout)
	}
	quiet("new default layout", "replica:2")

	if err := c.PutPool(ctx, shoal.Pool{Name: "fast", Layout: layout(t, "replica:1")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Mkdir(ctx, "/fast", time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := c.SetDirPool(ctx, "/fast", "fast"); err != nil {
		t.Fatal(err)
	}
	if p := poolOf("/fast/f"); p.Name != "fast" {
		t.Fatalf("after SetDirPool /fast: pool %s, want fast", p.Name)
	}
	if p := poolOf("/d/f"); p.Name != shoal.DefaultPool {
		t.Fatalf("beside /fast: pool %s, want default", p.Name)
	}
}

// Answers kept while the default layout changes under concurrent
// callers: once PutPool returns, every PoolFor gives the new layout.
func TestSoleMDPoolRace(t *testing.T) {
	ctx := context.Background()
	db, _ := openSQLite(t)
	c := cache.NewCatalog(db, cache.Options{L1: true, SoleMD: true})
	stop := spin(t, 3, func(g, i int) error {
		_, err := c.PoolFor(ctx, fmt.Sprintf("/g%d/%d", g, i))
		return err
	})
	for i := range 100 {
		want := fmt.Sprintf("replica:%d", 1+i%3)
		if err := c.PutPool(ctx, shoal.Pool{Name: shoal.DefaultPool, Layout: layout(t, want)}); err != nil {
			t.Fatal(err)
		}
		if p, err := c.PoolFor(ctx, "/x/f"); err != nil || p.Layout.String() != want {
			t.Fatalf("round %d: PoolFor after PutPool %s: %v, %v", i, want, p.Layout, err)
		}
	}
	stop()
}

// heldCount is a real catalog whose next PoolMappings, once armed, waits
// at its start until released: it puts a slow caller's count after a
// change and after a faster caller's newer answer.
type heldCount struct {
	*catalog.DB
	armed    atomic.Bool
	entered  chan struct{}
	released chan struct{}
}

func (h *heldCount) PoolMappings(ctx context.Context) (int, error) {
	if h.armed.CompareAndSwap(true, false) {
		close(h.entered)
		<-h.released
	}
	return h.DB.PoolMappings(ctx)
}

// A PoolFor that read the default pool before a PutPool and keeps its
// answer after a newer one was kept must not bring the old layout back:
// the kept answer carries the generation it was read under.
func TestSoleMDPoolSlowCaller(t *testing.T) {
	ctx := context.Background()
	db, _ := openSQLite(t)
	h := &heldCount{DB: db, entered: make(chan struct{}), released: make(chan struct{})}
	c := cache.NewCatalog(h, cache.Options{L1: true, SoleMD: true})
	if err := c.PutPool(ctx, shoal.Pool{Name: shoal.DefaultPool, Layout: layout(t, "replica:1")}); err != nil {
		t.Fatal(err)
	}
	release := sync.OnceFunc(func() { close(h.released) })
	t.Cleanup(release) // a failure below must not leave the slow caller waiting
	h.armed.Store(true)
	slow := make(chan error, 1)
	go func() {
		_, err := c.PoolFor(ctx, "/slow/f") // reads replica:1, then waits in its count
		slow <- err
	}()
	<-h.entered
	if err := c.PutPool(ctx, shoal.Pool{Name: shoal.DefaultPool, Layout: layout(t, "replica:2")}); err != nil {
		t.Fatal(err)
	}
	if p, err := c.PoolFor(ctx, "/fast/f"); err != nil || p.Layout.String() != "replica:2" {
		t.Fatalf("PoolFor after PutPool replica:2: %v, %v", p.Layout, err)
	}
	release()
	if err := <-slow; err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if p, err := c.PoolFor(ctx, fmt.Sprintf("/after/%d", i)); err != nil || p.Layout.String() != "replica:2" {
			t.Fatalf("PoolFor after the slow caller kept its answer: %v, %v, want replica:2", p.Layout, err)
		}
	}
}

// With several md on one catalog, sharing memcached: one md's finding
// that no directory is mapped answers every md's PoolFor without the
// catalog, with the default pool; a new default layout or a mapping made
// through one md is seen by the other's next PoolFor.
func TestSharedFindingOfNoPoolMappings(t *testing.T) {
	ctx := context.Background()
	a, b, dbA, dbB := twoMDs(t)
	poolOf := func(c *cache.Catalog, path string) shoal.Pool {
		t.Helper()
		p, err := c.PoolFor(ctx, path)
		if err != nil {
			t.Fatalf("PoolFor(%s): %v", path, err)
		}
		return p
	}
	quiet := func(what string, c *cache.Catalog, db *catalog.DB, want shoal.Pool) {
		t.Helper()
		if n := fewestTrips(db, func() {
			for i := range 20 {
				if p := poolOf(c, fmt.Sprintf("/d/f%d", i)); p != want {
					t.Fatalf("%s: pool %+v, want %+v", what, p, want)
				}
			}
		}); n != 0 {
			t.Errorf("%s: 20 PoolFor asked the catalog %d times, want 0", what, n)
		}
	}
	def := poolOf(b, "/d/f") // B finds no mapping
	quiet("no mapping, A", a, dbA, def)
	quiet("no mapping, B", b, dbB, def)

	r2 := shoal.Pool{Name: shoal.DefaultPool, Layout: layout(t, "ec:4+2")}
	if err := a.PutPool(ctx, r2); err != nil {
		t.Fatal(err)
	}
	if p := poolOf(b, "/d/f"); p != r2 {
		t.Fatalf("after PutPool default ec:4+2 through A: B's pool %+v", p)
	}
	quiet("new default layout, A", a, dbA, r2)

	if err := a.PutPool(ctx, shoal.Pool{Name: "fast", Layout: layout(t, "replica:1")}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Mkdir(ctx, "/fast", time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := a.SetDirPool(ctx, "/fast", "fast"); err != nil {
		t.Fatal(err)
	}
	if p := poolOf(b, "/fast/f"); p.Name != "fast" {
		t.Fatalf("after SetDirPool /fast through A: B's pool %+v, want fast", p)
	}
	before := dbB.RoundTrips()
	if p := poolOf(b, "/d/f"); p != r2 {
		t.Fatalf("beside /fast: pool %+v, want %+v", p, r2)
	}
	if n := dbB.RoundTrips() - before; n != 1 {
		t.Errorf("with a mapping: PoolFor cost %d catalog trips, want 1 (the count spared)", n)
	}
}
