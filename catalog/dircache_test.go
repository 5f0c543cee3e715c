package catalog

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"shoal"
)

// The writer's directory cache (dircache.go) must never let a create land
// under a directory that is gone or was replaced: each test below makes
// the writer keep a directory, changes it in one of the ways the cache
// must notice, and checks where the next create lands.

func openDirCacheDB(t *testing.T, file string, solo bool) *DB {
	t.Helper()
	db, err := Open(context.Background(), Options{DSN: "sqlite:" + file, SoloCommits: solo})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func putEmpty(db *DB, path string) error {
	_, err := db.PutInline(context.Background(), path, nil, shoal.Sums{}, time.Now(), shoal.Condition{}, time.Time{})
	return err
}

// landsUnder checks that file's parent is dir's entry as it is now.
func landsUnder(t *testing.T, db *DB, file, dir string) {
	t.Helper()
	ctx := context.Background()
	f, err := db.Stat(ctx, file)
	if err != nil {
		t.Fatalf("Stat %s: %v", file, err)
	}
	d, err := db.Stat(ctx, dir)
	if err != nil {
		t.Fatalf("Stat %s: %v", dir, err)
	}
	if f.Parent != d.ID {
		t.Fatalf("%s has parent %d, but %s is %d", file, f.Parent, dir, d.ID)
	}
}

func mustKind(t *testing.T, err error, kind shoal.Kind, what string) {
	t.Helper()
	if !shoal.IsKind(err, kind) {
		t.Fatalf("%s: %v, want %v", what, err, kind)
	}
}

// Another handle on the same file (another process) removes and remakes
// a directory the writer keeps: data_version tells.
func TestDirCacheOtherHandle(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "catalog.db")
	db, other := openDirCacheDB(t, file, false), openDirCacheDB(t, file, false)
	if _, err := db.Mkdir(ctx, "/a", time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := putEmpty(db, "/a/f1"); err != nil { // the writer keeps /a
		t.Fatal(err)
	}
	if err := other.Remove(ctx, "/a", time.Time{}); err != nil {
		t.Fatal(err)
	}
	mustKind(t, putEmpty(db, "/a/f2"), shoal.KindConflict, "create under a directory another handle removed")
	if _, err := other.Mkdir(ctx, "/a", time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := putEmpty(db, "/a/f3"); err != nil {
		t.Fatal(err)
	}
	landsUnder(t, db, "/a/f3", "/a")
}

// The writer itself moves a directory it keeps: the pre-update hook tells.
func TestDirCacheMove(t *testing.T) {
	ctx := context.Background()
	db := openDirCacheDB(t, filepath.Join(t.TempDir(), "catalog.db"), false)
	if _, err := db.Mkdir(ctx, "/a", time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := putEmpty(db, "/a/f1"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Move(ctx, "/a", "/b", false, time.Time{}); err != nil {
		t.Fatal(err)
	}
	mustKind(t, putEmpty(db, "/a/f2"), shoal.KindConflict, "create under a moved directory's old path")
	if err := putEmpty(db, "/b/f2"); err != nil {
		t.Fatal(err)
	}
	landsUnder(t, db, "/b/f2", "/b")
}

// mkdirThenFail makes /x, reads /x/y's ancestors (so the writer keeps /x),
// then fails: /x is rolled back.
func mkdirThenFail(t *tx) error {
	ctx := context.Background()
	if _, err := t.exec(ctx, `INSERT INTO entries (parent_id, name, path, path_hash, is_dir, mtime_ns, ctime_ns)
		VALUES (1, 'x', '/x', ?, 1, 0, 0)`, pathHash("/x")); err != nil {
		return err
	}
	if _, parent, _, err := t.lockPath(ctx, "/x/y"); err != nil || parent == nil {
		return shoal.Errorf("test", shoal.KindOther, "lockPath /x/y: parent %v, %v", parent, err)
	}
	return shoal.Errorf("test", shoal.KindPermission, "refused after making /x")
}

// A directory the writer read inside a transaction that is then rolled
// back is forgotten, whether the whole transaction rolls back (SQLite's
// rollback hook) or only one member of a batch (its savepoint).
func TestDirCacheRollback(t *testing.T) {
	ctx := context.Background()
	t.Run("transaction", func(t *testing.T) {
		db := openDirCacheDB(t, filepath.Join(t.TempDir(), "catalog.db"), true)
		mustKind(t, db.inTx(ctx, "test", "/x", mkdirThenFail), shoal.KindPermission, "mkdirThenFail")
		mustKind(t, putEmpty(db, "/x/y"), shoal.KindConflict, "create under a rolled back directory")
	})
	t.Run("savepoint", func(t *testing.T) {
		db := openDirCacheDB(t, filepath.Join(t.TempDir(), "catalog.db"), false)
		create := func(t *tx) error {
			_, err := t.putFile(ctx, "test", "/x/y", fileData{inline: []byte{}}, time.Time{})
			return err
		}
		first := &member{ctx: ctx, fn: mkdirThenFail, done: make(chan struct{})}
		second := &member{ctx: ctx, fn: create, done: make(chan struct{})}
		db.group.runBatch([]*member{first, second})
		mustKind(t, first.err, shoal.KindPermission, "mkdirThenFail")
		mustKind(t, second.err, shoal.KindConflict, "create under a directory rolled back to its savepoint")
		if _, err := db.Stat(ctx, "/x/y"); !shoal.IsKind(err, shoal.KindNotFound) {
			t.Fatalf("Stat /x/y: %v, want not found", err)
		}
	})
}
