package catalog_test

import (
	"context"
	"testing"
	"time"

	"shoal"
	"shoal/catalog"
)

// Over MariaDB, an upload's commit checks its client against the locks
// taken since the reservation (LockedCommit) at no statement of its own
// while no live lock is rooted at its path or an ancestor: the count
// rides in the ancestors' read. With one there, the check's query runs.
func TestMariaDBCommitLockCheckTrips(t *testing.T) {
	db := openMariaDB(t)
	ctx := context.Background()
	now := time.Now()
	for _, d := range []string{"/t", "/elsewhere"} {
		if _, err := db.Mkdir(ctx, d, now); err != nil {
			t.Fatal(err)
		}
	}
	commitTrips := func(id, client string) uint64 {
		t.Helper()
		u := &shoal.Upload{ID: id, Path: "/t/" + id, Servers: []string{"s1"}, Object: "o" + id,
			Layout: shoal.DefaultLayout, Expires: time.Now().Add(time.Hour), Client: client}
		if err := db.BeginUpload(ctx, u); err != nil {
			t.Fatal(err)
		}
		before := db.RoundTrips()
		if _, err := db.FinishUpload(ctx, &shoal.Commit{Upload: id, Size: 1, Sums: shoal.Sums{Adler32: 1}, MTime: now,
			Replicas: []shoal.Replica{{Server: "s1", Object: "o" + id, Size: 1, Sum: 1}}}, now); err != nil {
			t.Fatalf("FinishUpload %s: %v", id, err)
		}
		return db.RoundTrips() - before
	}
	lock := func(token, root string) {
		t.Helper()
		l := &shoal.Lock{Token: "opaquelocktoken:" + token, Root: root, Infinity: true, Exclusive: true,
			Principal: "user:bob", Timeout: time.Hour, Expires: time.Now().Add(time.Hour)}
		if err := db.CreateLock(ctx, l, shoal.LockLimits{}, time.Now()); err != nil {
			t.Fatal(err)
		}
	}

	unchecked := commitTrips("a", "") // no client: no check at all
	if n := commitTrips("b", "user:bob"); n != unchecked {
		t.Errorf("commit checked against no lock: %d round trips, want %d (as unchecked)", n, unchecked)
	}
	lock("l1", "/elsewhere")
	if n := commitTrips("c", "user:bob"); n != unchecked {
		t.Errorf("commit with a lock elsewhere: %d round trips, want %d", n, unchecked)
	}
	lock("l2", "/t") // bob's own: the commit passes, after asking
	if n := commitTrips("d", "user:bob"); n != unchecked+1 {
		t.Errorf("commit under a lock on its directory: %d round trips, want %d (the check's query)", n, unchecked+1)
	}
}

// Over SQLite, a new file whose directory the writer keeps (the directory
// cache) is inserted without reading its path first: BEGIN, the cache's
// check (PRAGMA data_version), INSERT, COMMIT. Where the insert finds the path taken, the write goes on as if
// it had read it: an overwrite, a refused create-only PUT, a directory.
func TestSQLiteNewFileInsertsFirst(t *testing.T) {
	testNewFileInsertsFirst(t, openSQLite(t), 4, "BEGIN, PRAGMA, INSERT, COMMIT")
}

// TestMariaDBNewFileInsertsFirst: over MySQL a create reads its ancestors
// (a shared lock on each) and inserts, without the exclusive read of its
// own path that found nothing (5 statements before).
func TestMariaDBNewFileInsertsFirst(t *testing.T) {
	testNewFileInsertsFirst(t, openMariaDB(t), 4, "START TRANSACTION, the ancestors, INSERT, COMMIT")
}

// testNewFileInsertsFirst: a new file takes want statements; an
// overwrite, a create-only PUT of an existing file and a PUT over a
// directory, which find the path taken only when they insert, still get
// their own answers.
func testNewFileInsertsFirst(t *testing.T, db *catalog.DB, want int, what string) {
	ctx := context.Background()
	now := time.Now()
	if _, err := db.Mkdir(ctx, "/t", now); err != nil {
		t.Fatal(err)
	}
	put := func(path, data string, cond shoal.Condition) (*shoal.Entry, error) {
		return db.PutInline(ctx, path, []byte(data), shoal.Sums{}, now, cond, now)
	}
	if _, err := put("/t/a", "a", shoal.Condition{}); err != nil { // /t cached from here on
		t.Fatal(err)
	}
	before := db.RoundTrips()
	if _, err := put("/t/b", "b", shoal.Condition{}); err != nil {
		t.Fatal(err)
	}
	if n := db.RoundTrips() - before; n != uint64(want) {
		t.Errorf("a new file: %d statements, want %d (%s)", n, want, what)
	}
	if e, err := put("/t/b", "b2", shoal.Condition{}); err != nil || e.Version != 2 || string(e.Inline) != "b2" {
		t.Errorf("overwrite: %+v, %v; want version 2, b2", e, err)
	}
	if _, err := put("/t/b", "b3", shoal.Condition{CreateOnly: true}); !shoal.IsKind(err, shoal.KindPrecondition) {
		t.Errorf("create-only PUT of an existing file: %v, want KindPrecondition", err)
	}
	if _, err := db.Mkdir(ctx, "/t/d", now); err != nil {
		t.Fatal(err)
	}
	if _, err := put("/t/d", "x", shoal.Condition{}); !shoal.IsKind(err, shoal.KindIsDir) {
		t.Errorf("PUT over a directory: %v, want KindIsDir", err)
	}
	if e, err := db.Stat(ctx, "/t/b"); err != nil || string(e.Inline) != "b2" || e.Version != 2 {
		t.Errorf("Stat /t/b = %+v, %v; want b2 at version 2", e, err)
	}
}
