package catalog

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"shoal"
)

// MinCatalogFree is the free space under which an SQLite catalog's disk
// counts as full (SpaceProblem): SQLite needs room to grow its WAL, and
// a write that finds none fails.
const MinCatalogFree = 1 << 20

// spaceWatch remembers whether the catalog's disk is full: a write that
// failed for want of space (SQLITE_FULL; MySQL's disk full and table
// full errors) marks it until a write succeeds, and for SQLite the free
// space of the database's filesystem is looked at too. Such a failure is
// KindInsufficient (507, as for a full data server), never a 503: the
// catalog is there, it has no room.
type spaceWatch struct {
	dir    string       // SQLite: the database's directory; "" for MySQL
	fullAt atomic.Int64 // unix ns of the last write refused for want of space; 0 since one succeeded
}

func (w *spaceWatch) wrote() {
	if w.fullAt.Load() != 0 {
		w.fullAt.Store(0)
	}
}

func (w *spaceWatch) full(op, path string, err error) error {
	w.fullAt.Store(time.Now().UnixNano())
	return shoal.E(op, path, shoal.KindInsufficient, fmt.Errorf("the catalog's disk is full (%v)", err))
}

// low reports an SQLite catalog whose filesystem has less than
// MinCatalogFree left.
func (w *spaceWatch) low() bool {
	free, _, ok := w.statfs()
	return ok && free < MinCatalogFree
}

func (w *spaceWatch) statfs() (free, total int64, ok bool) {
	if w.dir == "" {
		return 0, 0, false
	}
	var st unix.Statfs_t
	if err := unix.Statfs(w.dir, &st); err != nil {
		return 0, 0, false
	}
	bsize := int64(st.Bsize) // int32 on 32-bit ARM
	return int64(st.Bavail) * bsize, int64(st.Blocks) * bsize, true
}

// DiskSpace is the free and total bytes of an SQLite catalog's
// filesystem; ok is false for MySQL/MariaDB (md cannot see that disk).
func (db *DB) DiskSpace() (free, total int64, ok bool) { return db.space.statfs() }

// SpaceProblem says why the catalog's disk counts as full, or nil: a
// write refused for want of space since which none has succeeded, or (for
// SQLite) less than MinCatalogFree left on its filesystem. md's health
// check reports it.
func (db *DB) SpaceProblem(ctx context.Context) error {
	if at := db.space.fullAt.Load(); at != 0 {
		return shoal.Errorf("catalog", shoal.KindInsufficient, "disk full: a write was refused for want of space %v ago and none has succeeded since",
			time.Since(time.Unix(0, at)).Round(time.Second))
	}
	if free, total, ok := db.space.statfs(); ok && free < MinCatalogFree {
		return shoal.Errorf("catalog", shoal.KindInsufficient, "disk full: %d bytes free of %d on %s (under %d)", free, total, db.space.dir, MinCatalogFree)
	}
	return nil
}

func sqliteDir(target string) string {
	abs, err := filepath.Abs(target)
	if err != nil {
		return ""
	}
	return filepath.Dir(abs)
}
