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
	"shoal/internal/testsvc"
)

func lockOn(token, root string, now time.Time, life time.Duration) *shoal.Lock {
	return &shoal.Lock{Token: "opaquelocktoken:" + token, Root: root, Infinity: true, Exclusive: true,
		Owner: "<D:href>me</D:href>", Principal: "user:ann", Timeout: life, Expires: now.Add(life)}
}

// With SoleMD, a write's lock check asks the catalog nothing while no lock
// exists, and sees a lock as soon as it is taken.
func TestSoleMDKnowsThereAreNoLocks(t *testing.T) {
	ctx := context.Background()
	db, _ := openSQLite(t)
	c := cache.NewCatalog(db, cache.Options{L1: true, SoleMD: true})
	now := time.Now()
	check := func(path string, at time.Time) []shoal.Lock {
		t.Helper()
		ls, err := c.Locks(ctx, path, false, at)
		if err != nil {
			t.Fatalf("Locks(%s): %v", path, err)
		}
		return ls
	}
	quiet := func(what string, at time.Time) {
		t.Helper()
		if n := fewestTrips(db, func() {
			for i := range 50 {
				if ls := check(fmt.Sprintf("/d/f%d", i), at); len(ls) != 0 {
					t.Fatalf("%s: locks %v", what, ls)
				}
			}
		}); n != 0 {
			t.Errorf("%s: 50 lock checks asked the catalog %d times, want 0", what, n)
		}
	}
	check("/d/f", now) // learns that there is none
	quiet("no lock ever", now)

	if err := c.CreateLock(ctx, lockOn("a", "/d", now, time.Hour), shoal.LockLimits{}, now); err != nil {
		t.Fatal(err)
	}
	if ls := check("/d/f", now); len(ls) != 1 || ls[0].Root != "/d" {
		t.Fatalf("after LOCK /d: locks of /d/f = %v, want the lock", ls)
	}
	if n, err := c.CountLocks(ctx, now); err != nil || n != 1 {
		t.Errorf("CountLocks = %d, %v; want 1", n, err)
	}
	if err := c.Unlock(ctx, "opaquelocktoken:a", "/d", "user:ann", now); err != nil {
		t.Fatal(err)
	}
	if ls := check("/d/f", now); len(ls) != 0 {
		t.Fatalf("after UNLOCK: %v", ls)
	}
	later := now.Add(2 * time.Second) // past the probe's pause
	check("/d/f", later)
	quiet("after UNLOCK", later)

	// A lock that expires is gone too; an instant before the count that
	// found none is asked of the catalog.
	if err := c.CreateLock(ctx, lockOn("b", "/d", later, time.Minute), shoal.LockLimits{}, later); err != nil {
		t.Fatal(err)
	}
	if ls := check("/d/f", later); len(ls) != 1 {
		t.Fatalf("locks of /d/f = %v, want the lock", ls)
	}
	expired := later.Add(2 * time.Minute)
	check("/d/f", expired)
	quiet("after expiry", expired)
	if ls := check("/d/f", later); len(ls) != 1 {
		t.Errorf("locks of /d/f before the lock expired = %v, want it", ls)
	}
}

// A count that races a new lock must not be kept: once CreateLock has
// returned, every check sees the lock, while other goroutines keep
// counting.
func TestSoleMDLockRace(t *testing.T) {
	ctx := context.Background()
	db, _ := openSQLite(t)
	c := cache.NewCatalog(db, cache.Options{L1: true, SoleMD: true})
	base := time.Now()
	var ticks atomic.Int64
	clock := func() time.Time { return base.Add(time.Duration(ticks.Add(1)) * 2 * time.Second) } // every call may count
	const life = 1_000_000 * time.Hour

	stop := spin(t, 3, func(g, i int) error {
		_, err := c.Locks(ctx, fmt.Sprintf("/other%d/%d", g, i), false, clock())
		return err
	})
	for i := range 200 {
		root := fmt.Sprintf("/r%d", i)
		tok := fmt.Sprintf("t%d", i)
		if err := c.CreateLock(ctx, lockOn(tok, root, base, life), shoal.LockLimits{}, clock()); err != nil {
			t.Fatal(err)
		}
		if ls, err := c.Locks(ctx, root+"/f", false, clock()); err != nil || len(ls) != 1 {
			t.Fatalf("lock %d: checked after LOCK: %v, %v; want the lock", i, ls, err)
		}
		if err := c.Unlock(ctx, "opaquelocktoken:"+tok, root, "user:ann", clock()); err != nil {
			t.Fatal(err)
		}
	}
	stop()
}

// spin runs n goroutines calling fn(g, i) for i = 0, 1, … until the
// returned stop is called (which waits for them); an error ends one.
func spin(t *testing.T, n int, fn func(g, i int) error) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for g := range n {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				if err := fn(g, i); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	return func() {
		close(done)
		wg.Wait()
	}
}

// twoMDs is what two md see of one SQLite catalog with memcached shared:
// a cache decorator each, with its own connection to the catalog.
func twoMDs(t *testing.T) (a, b *cache.Catalog, dbA, dbB *catalog.DB) {
	t.Helper()
	addr := testsvc.Memcached(t)
	dsn := sqliteDSN(t)
	dbA, dbB = openDSN(t, dsn), openDSN(t, dsn)
	a = cache.NewCatalog(dbA, cache.Options{L2: newMemcache(t, addr)})
	b = cache.NewCatalog(dbB, cache.Options{L2: newMemcache(t, addr)})
	return a, b, dbA, dbB
}

// fewestTrips runs fn up to three times and returns the fewest catalog
// round trips a run made: the catalog's own background work (its tree
// operations' recovery runs at open and every few seconds) may add one
// to a run, never to all three, while a cache that asks the catalog does
// so in every run.
func fewestTrips(db *catalog.DB, fn func()) uint64 {
	var fewest uint64
	for i := range 3 {
		before := db.RoundTrips()
		fn()
		n := db.RoundTrips() - before
		if i == 0 || n < fewest {
			fewest = n
		}
		if fewest == 0 {
			break
		}
	}
	return fewest
}

// With several md sharing memcached, a write's lock check asks the catalog
// nothing while no lock exists (a finding in L2 that one md's count makes
// for all), and every md sees a lock as soon as another has taken it.
func TestSharedFindingOfNoLocks(t *testing.T) {
	ctx := context.Background()
	a, b, dbA, dbB := twoMDs(t)
	check := func(c *cache.Catalog, path string) []shoal.Lock {
		t.Helper()
		ls, err := c.Locks(ctx, path, false, time.Now())
		if err != nil {
			t.Fatalf("Locks(%s): %v", path, err)
		}
		return ls
	}
	trips := func(c *cache.Catalog, db *catalog.DB) uint64 {
		return fewestTrips(db, func() {
			for i := range 20 {
				if ls := check(c, fmt.Sprintf("/d/f%d", i)); len(ls) != 0 {
					t.Fatalf("locks %v", ls)
				}
			}
		})
	}
	check(b, "/d/f") // B counts: none
	if n := trips(a, dbA); n != 0 {
		t.Errorf("no lock: A's 20 checks asked the catalog %d times, want 0 (B's finding)", n)
	}
	if n := trips(b, dbB); n != 0 {
		t.Errorf("no lock: B's 20 checks asked the catalog %d times, want 0", n)
	}

	now := time.Now()
	if err := a.CreateLock(ctx, lockOn("s", "/d", now, time.Hour), shoal.LockLimits{}, now); err != nil {
		t.Fatal(err)
	}
	if ls := check(b, "/d/f"); len(ls) != 1 || ls[0].Root != "/d" {
		t.Fatalf("after LOCK /d through A: B's locks of /d/f = %v, want the lock", ls)
	}
	before := dbB.RoundTrips()
	if ls := check(b, "/e/f"); len(ls) != 0 {
		t.Fatalf("locks of /e/f = %v, want none", ls)
	}
	if n := dbB.RoundTrips() - before; n != 1 {
		t.Errorf("with a lock taken: a check cost %d catalog trips, want 1 (the count spared)", n)
	}
	if err := b.Unlock(ctx, "opaquelocktoken:s", "/d", "user:ann", time.Now()); err != nil {
		t.Fatal(err)
	}
	if ls := check(a, "/d/f"); len(ls) != 0 {
		t.Fatalf("after UNLOCK through B: A's locks of /d/f = %v", ls)
	}
	// The finding of some expires (findingTTL), then a count finds none.
	deadline := time.Now().Add(6 * time.Second)
	for trips(a, dbA) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("6 s after the UNLOCK, lock checks still ask the catalog")
		}
		time.Sleep(200 * time.Millisecond)
	}
}
