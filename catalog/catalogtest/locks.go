package catalogtest

import (
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"shoal"
)

func newLock(token, root string, infinity, exclusive bool, principal string, now time.Time) *shoal.Lock {
	return &shoal.Lock{Token: "opaquelocktoken:" + token, Root: root, Infinity: infinity, Exclusive: exclusive,
		Owner: "<D:href>me</D:href>", Principal: principal, Timeout: time.Hour, Expires: now.Add(time.Hour)}
}

func lockRoots(ls []shoal.Lock) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.Root)
	}
	sort.Strings(out)
	return out
}

func testLocks(t *testing.T, c shoal.Catalog) {
	now := time.Now()
	none := shoal.LockLimits{}
	ok(t, c.CreateLock(ctx(t), newLock("a", "/a", true, true, "user:ann", now), none, now))
	// Conflicts: an exclusive infinity lock on /a excludes /a/x, /a and /.
	for _, l := range []*shoal.Lock{
		newLock("b", "/a/x", false, false, "user:bob", now),
		newLock("c", "/a", false, true, "user:bob", now),
		newLock("d", "/", true, false, "user:bob", now),
	} {
		wantKind(t, "conflicting lock on "+l.Root, c.CreateLock(ctx(t), l, none, now), shoal.KindLocked)
	}
	// Depth 0 on / does not cover /a; a sibling is free.
	ok(t, c.CreateLock(ctx(t), newLock("e", "/", false, true, "user:bob", now), none, now))
	ok(t, c.CreateLock(ctx(t), newLock("f", "/ab", true, false, "user:bob", now), none, now))
	ok(t, c.CreateLock(ctx(t), newLock("g", "/ab", true, false, "user:cy", now), none, now)) // shared + shared

	if got := lockRoots(got(c.Locks(ctx(t), "/a/x/y", false, now)).must(t)); fmt.Sprint(got) != "[/a]" {
		t.Errorf("locks covering /a/x/y = %v, want [/a]", got)
	}
	if got := lockRoots(got(c.Locks(ctx(t), "/", false, now)).must(t)); fmt.Sprint(got) != "[/]" {
		t.Errorf("locks covering / = %v, want [/]", got)
	}
	if got := lockRoots(got(c.Locks(ctx(t), "/", true, now)).must(t)); fmt.Sprint(got) != "[/ /a /ab /ab]" {
		t.Errorf("locks at and below / = %v", got)
	}
	if got := lockRoots(got(c.Locks(ctx(t), "/a", true, now)).must(t)); fmt.Sprint(got) != "[/a]" {
		t.Errorf("locks at and below /a = %v (/ab is not below /a)", got)
	}
	if n := got(c.CountLocks(ctx(t), now)).must(t); n != 4 {
		t.Errorf("CountLocks = %d, want 4", n)
	}

	// Refresh and unlock: only the owner, only on a path the lock covers.
	_, err := c.RefreshLock(ctx(t), "opaquelocktoken:a", "/a/x", "user:bob", time.Minute, now)
	wantKind(t, "refresh by another principal", err, shoal.KindPermission)
	_, err = c.RefreshLock(ctx(t), "opaquelocktoken:a", "/b", "user:ann", time.Minute, now)
	wantKind(t, "refresh on a path outside the lock", err, shoal.KindPrecondition)
	l := got(c.RefreshLock(ctx(t), "opaquelocktoken:a", "/a/x", "user:ann", 2*time.Hour, now)).must(t)
	if l.Timeout != 2*time.Hour || !l.Expires.Equal(time.Unix(0, now.Add(2*time.Hour).UnixNano())) {
		t.Errorf("refreshed lock %+v", l)
	}
	wantKind(t, "unlock by another principal", c.Unlock(ctx(t), "opaquelocktoken:a", "/a", "user:bob", now), shoal.KindPermission)
	wantKind(t, "unlock of an unknown token", c.Unlock(ctx(t), "opaquelocktoken:zz", "/a", "user:ann", now), shoal.KindConflict)
	ok(t, c.Unlock(ctx(t), "opaquelocktoken:a", "/a", "user:ann", now))
	wantKind(t, "unlock twice", c.Unlock(ctx(t), "opaquelocktoken:a", "/a", "user:ann", now), shoal.KindConflict)

	// Expired locks are ignored, then collected.
	later := now.Add(3 * time.Hour)
	if ls := got(c.Locks(ctx(t), "/", true, later)).must(t); len(ls) != 0 {
		t.Errorf("expired locks still listed: %v", lockRoots(ls))
	}
	ok(t, c.CreateLock(ctx(t), newLock("h", "/a", true, true, "user:bob", later), none, later))
	if n := got(c.ExpireLocks(ctx(t), later)).must(t); n != 3 {
		t.Errorf("ExpireLocks = %d, want 3", n)
	}
	// Remove and Move drop the locks at and below the path.
	mkdir(t, c, "/r", "/r/b", "/m", "/m/n")
	ok(t, c.CreateLock(ctx(t), newLock("i", "/r/b", false, true, "user:bob", later), none, later))
	ok(t, c.CreateLock(ctx(t), newLock("j", "/m/n", false, true, "user:bob", later), none, later))
	ok(t, c.CreateLock(ctx(t), newLock("k", "/ma", false, true, "user:bob", later), none, later))
	ok(t, c.Remove(ctx(t), "/r", grace))
	got(c.Move(ctx(t), "/m", "/m2", false, grace)).must(t)
	if got := lockRoots(got(c.Locks(ctx(t), "/", true, later)).must(t)); fmt.Sprint(got) != "[/a /ma]" {
		t.Errorf("locks after Remove /r and Move /m: %v, want [/a /ma]", got)
	}
}

func testLockLimits(t *testing.T, c shoal.Catalog) {
	now := time.Now()
	lim := shoal.LockLimits{PerPrincipal: 2, Total: 3}
	ok(t, c.CreateLock(ctx(t), newLock("1", "/x1", false, true, "user:ann", now), lim, now))
	ok(t, c.CreateLock(ctx(t), newLock("2", "/x2", false, true, "user:ann", now), lim, now))
	wantKind(t, "third lock of one principal", c.CreateLock(ctx(t), newLock("3", "/x3", false, true, "user:ann", now), lim, now), shoal.KindUnavailable)
	ok(t, c.CreateLock(ctx(t), newLock("4", "/x4", false, true, "user:bob", now), lim, now))
	wantKind(t, "lock beyond the total", c.CreateLock(ctx(t), newLock("5", "/x5", false, true, "user:cy", now), lim, now), shoal.KindUnavailable)
	if n := got(c.CountLocks(ctx(t), now)).must(t); n != 3 {
		t.Errorf("CountLocks = %d, want 3", n)
	}
}

// testConcurrentLocks: of many concurrent exclusive locks on one path
// (and its parent), exactly one is granted.
func testConcurrentLocks(t *testing.T, c shoal.Catalog) {
	now := time.Now()
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			root := "/race"
			if i%2 == 1 {
				root = "/race/f"
			}
			errs[i] = c.CreateLock(ctx(t), newLock(fmt.Sprintf("r%d", i), root, true, true, "user:ann", now), shoal.LockLimits{}, now)
		}()
	}
	wg.Wait()
	wins := 0
	for _, err := range errs {
		if err == nil {
			wins++
		} else {
			wantKind(t, "losing concurrent lock", err, shoal.KindLocked)
		}
	}
	if wins != 1 {
		t.Errorf("%d concurrent exclusive locks granted, want 1", wins)
	}
}

// testLockedCommit: a lock another principal takes on a path after an
// upload there was reserved stops the upload's commit (KindLocked,
// nothing visible, the upload gone); the uploader's own lock, a shared
// lock beside one the uploader holds, an anonymous client (named by its
// address) under an anonymous lock, and locks elsewhere do not.
func testLockedCommit(t *testing.T, c shoal.Catalog) {
	now := time.Now()
	none := shoal.LockLimits{}
	mkdir(t, c, "/lc")
	begin := func(id, path, client string) {
		t.Helper()
		ok(t, c.BeginUpload(ctx(t), &shoal.Upload{ID: id, Path: path, Servers: []string{"s1"}, Object: "o" + id,
			Layout: shoal.DefaultLayout, Expires: time.Now().Add(time.Hour), Client: client}))
	}
	finish := func(id string) error {
		_, err := c.FinishUpload(ctx(t), &shoal.Commit{Upload: id, Size: 1, Sums: shoal.Sums{Adler32: 1}, MTime: t0,
			Replicas: []shoal.Replica{{Server: "s1", Object: "o" + id, Size: 1, Sum: 1}}}, grace)
		return err
	}
	begin("1c01", "/lc/a", "user:bob")
	begin("1c02", "/lc/b", "user:ann")
	begin("1c03", "/lc/c", "ip:127.0.0.1")
	ok(t, c.CreateLock(ctx(t), newLock("la", "/lc", true, true, "user:ann", now), none, now))
	wantKind(t, "commit under a lock taken since by another principal", finish("1c01"), shoal.KindLocked)
	wantMissing(t, c, "/lc/a")
	wantKind(t, "the refused upload again", finish("1c01"), shoal.KindNotFound)
	ok(t, finish("1c02")) // ann's own lock
	wantKind(t, "an anonymous commit under ann's lock", finish("1c03"), shoal.KindLocked)

	mkdir(t, c, "/ls")
	begin("1c04", "/ls/a", "user:bob")
	begin("1c05", "/ls/b", "ip:192.0.2.1")
	ok(t, c.CreateLock(ctx(t), newLock("lb", "/ls", true, false, "user:ann", now), none, now))
	ok(t, c.CreateLock(ctx(t), newLock("lc", "/ls", true, false, "user:bob", now), none, now))
	ok(t, c.CreateLock(ctx(t), newLock("ld", "/ls/b", false, false, "anonymous", now), none, now))
	ok(t, finish("1c04")) // shared: bob holds one on /ls too
	wantKind(t, "anonymous under shared locks of ann and bob", finish("1c05"), shoal.KindLocked)

	// Live locks elsewhere (above: on /lc and /ls) do not stop a commit
	// on a path none of them is rooted above.
	mkdir(t, c, "/lf")
	begin("1c07", "/lf/a", "user:bob")
	ok(t, finish("1c07"))

	mkdir(t, c, "/lx")
	begin("1c06", "/lx/a", "ip:192.0.2.1")
	ok(t, c.CreateLock(ctx(t), newLock("le", "/lx/a", false, true, "anonymous", now), none, now))
	ok(t, finish("1c06")) // anonymous's own lock

	// PutFile (a staged create) checks the same for its Condition.Client.
	put := func(path, client string) error {
		_, err := c.PutFile(ctx(t), path, shoal.DefaultLayout, &shoal.Commit{Size: 1, Sums: shoal.Sums{Adler32: 1}, MTime: t0,
			Replicas: []shoal.Replica{{Server: "s1", Object: "p" + client, Size: 1, Sum: 1}}}, shoal.Condition{Client: client}, grace)
		return err
	}
	wantKind(t, "PutFile by bob under ann's lock", put("/lc/p", "user:bob"), shoal.KindLocked)
	wantMissing(t, c, "/lc/p")
	ok(t, put("/lc/p", "user:ann"))
	ok(t, put("/lc/q", "")) // no client: no check
}
