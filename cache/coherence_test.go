package cache_test

import (
	"context"
	"testing"
	"time"

	"shoal"
	"shoal/cache"
	"shoal/internal/testsvc"
)

var (
	mtime = time.Unix(1_700_000_000, 0)
	grace = time.Unix(1_800_000_000, 0)
)

// mdPair is two md replicas' decorators over one catalog file and one
// memcached.
type mdPair struct {
	a, b   *cache.Catalog
	bStats func() cache.Stats
}

func newPair(t *testing.T, dsn string, opts cache.Options) mdPair {
	t.Helper()
	addr := testsvc.Memcached(t)
	dbA, dbB := openDSN(t, dsn), openDSN(t, dsn)
	optsA, optsB := opts, opts
	optsA.L2, optsB.L2 = newMemcache(t, addr), newMemcache(t, addr)
	b := cache.NewCatalog(dbB, optsB)
	return mdPair{a: cache.NewCatalog(dbA, optsA), b: b, bStats: b.Stats}
}

// newPlainPair is newPair whose writer, A, has a memcached tier without
// its extras (plainCache).
func newPlainPair(t *testing.T, dsn string) mdPair {
	t.Helper()
	addr := testsvc.Memcached(t)
	b := cache.NewCatalog(openDSN(t, dsn), cache.Options{L2: newMemcache(t, addr)})
	a := cache.NewCatalog(openDSN(t, dsn), cache.Options{L2: plainCache{newMemcache(t, addr)}})
	return mdPair{a: a, b: b, bStats: b.Stats}
}

// plainCache is a shoal.Cache with only the interface's methods: the
// decorator falls back to one Set per invalidated key and one Get per key.
type plainCache struct{ shoal.Cache }

// warm makes B cache its current answer for each path, and proves it did:
// a second Stat of each must be an L2 hit.
func (p mdPair) warm(t *testing.T, paths ...string) {
	t.Helper()
	ctx := context.Background()
	for _, path := range paths {
		p.b.Stat(ctx, path)
	}
	before := p.bStats().L2.Hits
	for _, path := range paths {
		p.b.Stat(ctx, path)
	}
	if got := p.bStats().L2.Hits - before; got != uint64(len(paths)) {
		t.Fatalf("warming %v: %d L2 hits, want %d", paths, got, len(paths))
	}
}

// wantB checks what B answers for path now: an entry (check it) or an
// error kind.
func wantB(t *testing.T, c *cache.Catalog, path string, kind shoal.Kind, check func(*shoal.Entry) bool) {
	t.Helper()
	e, err := c.Stat(context.Background(), path)
	if kind != 0 {
		if !shoal.IsKind(err, kind) {
			t.Errorf("B: Stat(%s) = %+v, %v; want %v", path, e, err, kind)
		}
		return
	}
	if err != nil {
		t.Errorf("B: Stat(%s): %v", path, err)
		return
	}
	if check != nil && !check(e) {
		t.Errorf("B: Stat(%s) = %+v: stale", path, e)
	}
}

// result lets got(f(…)).must(t) take a two-valued call.
type result[T any] struct {
	v   T
	err error
}

func got[T any](v T, err error) result[T] { return result[T]{v, err} }

func (r result[T]) must(t *testing.T) T {
	t.Helper()
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.v
}

func isFile(e *shoal.Entry) bool { return !e.IsDir }
func isDir(e *shoal.Entry) bool  { return e.IsDir }

// Every mutation through md A is seen at once through md B, which had the
// old answer cached in memcached (L1 off: contract 3).
func TestCoherenceTwoMDs(t *testing.T) {
	t.Run("SQLite", func(t *testing.T) { testCoherenceTwoMDs(t, newPair(t, sqliteDSN(t), cache.Options{})) })
	t.Run("MariaDB", func(t *testing.T) { testCoherenceTwoMDs(t, newPair(t, testsvc.MariaDB(t), cache.Options{})) })
	// The writer's tier without SetMulti: its invalidations are Sets.
	t.Run("SQLite/plain", func(t *testing.T) { testCoherenceTwoMDs(t, newPlainPair(t, sqliteDSN(t))) })
}

func testCoherenceTwoMDs(t *testing.T, p mdPair) {
	a, b := p.a, p.b
	ctx := context.Background()

	// File create: B had "not found" cached.
	p.warm(t, "/f")
	v1 := got(a.PutInline(ctx, "/f", []byte("one"), shoal.Sums{}, mtime, shoal.Condition{}, grace)).must(t)
	wantB(t, b, "/f", 0, func(e *shoal.Entry) bool { return e.Version == v1.Version && e.Size == 3 })

	// Overwrite: B had version 1 cached.
	p.warm(t, "/f")
	v2 := got(a.PutInline(ctx, "/f", []byte("second"), shoal.Sums{}, mtime, shoal.Condition{}, grace)).must(t)
	wantB(t, b, "/f", 0, func(e *shoal.Entry) bool { return e.Version == v2.Version && e.Size == 6 })

	// Delete.
	p.warm(t, "/f")
	if err := a.Remove(ctx, "/f", grace); err != nil {
		t.Fatal(err)
	}
	wantB(t, b, "/f", shoal.KindNotFound, nil)

	// Mkdir; a path below a missing dir stays missing.
	p.warm(t, "/d", "/d/x")
	got(a.Mkdir(ctx, "/d", mtime)).must(t)
	wantB(t, b, "/d", 0, isDir)
	wantB(t, b, "/d/x", shoal.KindNotFound, nil)

	// A file created where B cached "not found" below it: now "not a dir".
	p.warm(t, "/g/x")
	got(a.PutInline(ctx, "/g", []byte("g"), shoal.Sums{}, mtime, shoal.Condition{}, grace)).must(t)
	wantB(t, b, "/g/x", shoal.KindNotDir, nil)

	// Move a file.
	x := got(a.PutInline(ctx, "/d/x", []byte("x"), shoal.Sums{}, mtime, shoal.Condition{}, grace)).must(t)
	p.warm(t, "/d/x", "/d/y")
	got(a.Move(ctx, "/d/x", "/d/y", false, grace)).must(t)
	wantB(t, b, "/d/x", shoal.KindNotFound, nil)
	wantB(t, b, "/d/y", 0, func(e *shoal.Entry) bool { return e.ID == x.ID })

	// Move a directory: no old descendant answers, new ones do.
	got(a.Mkdir(ctx, "/tree", mtime)).must(t)
	got(a.Mkdir(ctx, "/tree/a", mtime)).must(t)
	got(a.Mkdir(ctx, "/tree/a/b", mtime)).must(t)
	deep := got(a.PutInline(ctx, "/tree/a/b/file", []byte("deep"), shoal.Sums{}, mtime, shoal.Condition{}, grace)).must(t)
	p.warm(t, "/tree", "/tree/a", "/tree/a/b", "/tree/a/b/file", "/tree/a/b/none",
		"/moved", "/moved/a", "/moved/a/b/file")
	got(a.Move(ctx, "/tree", "/moved", false, grace)).must(t)
	for _, old := range []string{"/tree", "/tree/a", "/tree/a/b", "/tree/a/b/file"} {
		wantB(t, b, old, shoal.KindNotFound, nil)
	}
	wantB(t, b, "/moved", 0, isDir)
	wantB(t, b, "/moved/a", 0, isDir)
	wantB(t, b, "/moved/a/b/file", 0, func(e *shoal.Entry) bool { return e.ID == deep.ID && e.Path == "/moved/a/b/file" })
	wantB(t, b, "/tree/a/b/none", shoal.KindNotFound, nil)

	// Copy a directory over paths B knew as missing.
	p.warm(t, "/copy", "/copy/a/b/file", "/moved/a/b/file")
	got(a.Copy(ctx, "/moved", "/copy", false, grace)).must(t)
	wantB(t, b, "/copy/a/b/file", 0, func(e *shoal.Entry) bool { return e.ID != deep.ID && e.Size == 4 })
	wantB(t, b, "/moved/a/b/file", 0, func(e *shoal.Entry) bool { return e.ID == deep.ID })

	// Move a directory over an existing one (overwrite): the old subtree
	// of the destination is gone.
	got(a.Mkdir(ctx, "/other", mtime)).must(t)
	other := got(a.PutInline(ctx, "/other/o", []byte("o"), shoal.Sums{}, mtime, shoal.Condition{}, grace)).must(t)
	p.warm(t, "/copy/a/b/file", "/copy/o", "/other/o")
	got(a.Move(ctx, "/other", "/copy", true, grace)).must(t)
	wantB(t, b, "/copy/a/b/file", shoal.KindNotFound, nil)
	wantB(t, b, "/copy/o", 0, func(e *shoal.Entry) bool { return e.ID == other.ID })
	wantB(t, b, "/other/o", shoal.KindNotFound, nil)

	// Remove a directory with everything below it.
	p.warm(t, "/moved", "/moved/a/b", "/moved/a/b/file")
	if err := a.Remove(ctx, "/moved", grace); err != nil {
		t.Fatal(err)
	}
	for _, old := range []string{"/moved", "/moved/a/b", "/moved/a/b/file"} {
		wantB(t, b, old, shoal.KindNotFound, nil)
	}

	// A directory removed and made again is a new entry.
	d1 := got(a.Mkdir(ctx, "/again", mtime)).must(t)
	p.warm(t, "/again")
	if err := a.Remove(ctx, "/again", grace); err != nil {
		t.Fatal(err)
	}
	d2 := got(a.Mkdir(ctx, "/again", mtime)).must(t)
	wantB(t, b, "/again", 0, func(e *shoal.Entry) bool { return e.ID == d2.ID && e.ID != d1.ID })

	// A tree written around the decorators (shoal admin populate), then
	// forgotten through A: B finds what it had cached as missing.
	p.warm(t, "/pop", "/pop/d", "/pop/d/f")
	inner := a.Inner()
	got(inner.Mkdir(ctx, "/pop", mtime)).must(t)
	got(inner.Mkdir(ctx, "/pop/d", mtime)).must(t)
	got(inner.PutInline(ctx, "/pop/d/f", []byte("p"), shoal.Sums{}, mtime, shoal.Condition{}, grace)).must(t)
	wantB(t, b, "/pop/d/f", shoal.KindNotFound, nil) // still cached
	a.ForgetTree(ctx, "/pop")
	wantB(t, b, "/pop", 0, isDir)
	wantB(t, b, "/pop/d", 0, isDir)
	wantB(t, b, "/pop/d/f", 0, isFile)

	// A directory's own entry follows its children (its mtime), and
	// properties, through A.
	before := got(b.Stat(ctx, "/d")).must(t)
	p.warm(t, "/d")
	got(a.PutInline(ctx, "/d/new", []byte("n"), shoal.Sums{}, mtime.Add(time.Hour), shoal.Condition{}, grace)).must(t)
	after := got(a.Inner().Stat(ctx, "/d")).must(t)
	wantB(t, b, "/d", 0, func(e *shoal.Entry) bool { return e.MTime.Equal(after.MTime) })
	if after.MTime.Equal(before.MTime) {
		t.Logf("note: the catalog does not change a directory's mtime when a child is added")
	}
}

// With L1 on, B may answer from its own memory, but only for the L1 TTL.
func TestCoherenceL1Converges(t *testing.T) {
	const ttl = 300 * time.Millisecond
	p := newPair(t, sqliteDSN(t), cache.Options{L1: true, L1TTL: ttl})
	a, b := p.a, p.b
	ctx := context.Background()
	got(a.PutInline(ctx, "/f", []byte("one"), shoal.Sums{}, mtime, shoal.Condition{}, grace)).must(t)
	got(a.Mkdir(ctx, "/dir", mtime)).must(t)
	got(a.PutInline(ctx, "/dir/sub", []byte("s"), shoal.Sums{}, mtime, shoal.Condition{}, grace)).must(t)
	for _, path := range []string{"/f", "/dir/sub", "/dir/new"} {
		b.Stat(ctx, path)
	}
	if st := p.bStats(); st.L1.Misses == 0 {
		t.Fatalf("B's L1 saw no traffic: %+v", st)
	}
	hits := p.bStats().L1.Hits
	b.Stat(ctx, "/f")
	if p.bStats().L1.Hits != hits+1 {
		t.Fatal("B's second Stat of /f was not an L1 hit")
	}
	v2 := got(a.PutInline(ctx, "/f", []byte("second"), shoal.Sums{}, mtime, shoal.Condition{}, grace)).must(t)
	got(a.Move(ctx, "/dir", "/dir2", false, grace)).must(t)
	got(a.PutInline(ctx, "/dir2/new", []byte("n"), shoal.Sums{}, mtime, shoal.Condition{}, grace)).must(t)

	deadline := time.Now().Add(10 * ttl)
	for {
		e, err := b.Stat(ctx, "/f")
		_, errOld := b.Stat(ctx, "/dir/sub")
		_, errNew := b.Stat(ctx, "/dir2/new")
		if err == nil && e.Version == v2.Version && shoal.IsKind(errOld, shoal.KindNotFound) && errNew == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("B still stale %v after the mutations (L1 TTL %v): /f %+v %v; /dir/sub %v; /dir2/new %v",
				10*ttl, ttl, e, err, errOld, errNew)
		}
		time.Sleep(ttl / 10)
	}
	// A's own L1 is never stale for A's own writes.
	wantB(t, a, "/f", 0, func(e *shoal.Entry) bool { return e.Version == v2.Version })
	wantB(t, a, "/dir/sub", shoal.KindNotFound, nil)
}
