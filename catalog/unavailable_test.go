package catalog_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"shoal"
	"shoal/catalog"
)

// Another process holding SQLite's write lock past the busy timeout makes
// a write KindUnavailable (md: 503), with nothing changed; reads go on.
func TestSQLiteLockedIsUnavailable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	db, err := catalog.Open(context.Background(), catalog.Options{DSN: "sqlite:" + path, BusyTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	other, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	_, err = db.Mkdir(context.Background(), "/x", time.Now())
	if !shoal.IsKind(err, shoal.KindUnavailable) {
		t.Errorf("Mkdir while another process holds the lock = %v, want KindUnavailable", err)
	}
	if _, err := db.Stat(context.Background(), "/"); err != nil {
		t.Errorf("Stat while a writer holds the lock: %v", err)
	}
	conn.ExecContext(context.Background(), "ROLLBACK")
	if _, err := db.Stat(context.Background(), "/x"); !shoal.IsKind(err, shoal.KindNotFound) {
		t.Errorf("failed Mkdir left /x: %v", err)
	}
	if _, err := db.Mkdir(context.Background(), "/x", time.Now()); err != nil {
		t.Errorf("Mkdir after the lock is gone: %v", err)
	}
}

// A context that expires is KindUnavailable, not an internal error.
func TestDeadlineIsUnavailable(t *testing.T) {
	db := openSQLite(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	time.Sleep(time.Millisecond)
	if _, err := db.Stat(ctx, "/"); !shoal.IsKind(err, shoal.KindUnavailable) {
		t.Errorf("Stat with an expired context = %v, want KindUnavailable", err)
	}
	if _, err := db.Mkdir(ctx, "/y", time.Now()); !shoal.IsKind(err, shoal.KindUnavailable) {
		t.Errorf("Mkdir with an expired context = %v, want KindUnavailable", err)
	}
}
