package catalog_test

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"

	"shoal/catalog"
)

// An SQLite catalog opened with no pool size gets SQLiteReaders readers
// (each reader keeps its own page cache, so the count is the memory bound);
// an explicit size is kept.
func TestSQLiteReadPoolSize(t *testing.T) {
	if got, want := catalog.SQLiteReaders(), max(4, runtime.GOMAXPROCS(0)); got != want {
		t.Fatalf("SQLiteReaders() = %d, want %d", got, want)
	}
	if got := openSQLite(t).ReadPoolSize(); got != catalog.SQLiteReaders() {
		t.Errorf("default read pool = %d, want SQLiteReaders() = %d", got, catalog.SQLiteReaders())
	}
	db, err := catalog.Open(context.Background(), catalog.Options{
		DSN: "sqlite:" + filepath.Join(t.TempDir(), "catalog.db"), MaxOpenConns: 7})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer db.Close()
	if got := db.ReadPoolSize(); got != 7 {
		t.Errorf("read pool with MaxOpenConns 7 = %d, want 7", got)
	}
}
