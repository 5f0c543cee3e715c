package catalog

import (
	"context"
	"database/sql/driver"
	"errors"
	"sync"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// dirCache keeps, for SQLite's one writer connection, the directories
// write transactions found above the paths they changed, so that the next
// create below them reads only its own row: reading the ancestors was a
// third of the writer's time under a load of 0 B creates (a CPU profile
// of shoal all, 2026-12-03), where the writer is what limits.
//
// It is exact because it forgets everything whenever a row it holds could
// differ from the database as the writer sees it:
//   - a row of entries it holds is updated or deleted (SQLite's pre-update
//     hook sees every row a statement changes, whichever statement);
//   - anything is rolled back, a savepoint or a transaction: a row read
//     after a change that is undone must not outlive the change;
//   - another connection (another process) committed: PRAGMA data_version,
//     read once per transaction inside it, where nobody else can commit;
//   - the writer's connection is new.
//
// A new row cannot make a kept one wrong (paths are unique), so inserts
// are not watched.
type dirCache struct {
	mu      sync.Mutex
	byPath  map[string]node
	ids     map[int64]struct{}
	version int64 // data_version at the last check; -1: none yet
}

// maxCachedDirs bounds the cache; when full it starts again empty.
const maxCachedDirs = 4096

func newDirCache() *dirCache {
	return &dirCache{byPath: map[string]node{}, ids: map[int64]struct{}{}, version: -1}
}

// get returns the directory at path, if kept.
func (c *dirCache) get(path string) (node, bool) {
	if c == nil {
		return node{}, false
	}
	c.mu.Lock()
	n, ok := c.byPath[path]
	c.mu.Unlock()
	return n, ok
}

// keep remembers n, a directory just read by the writer.
func (c *dirCache) keep(n node) {
	if c == nil || !n.isDir {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.byPath) >= maxCachedDirs {
		c.clearLocked()
	}
	c.byPath[n.path] = n
	c.ids[n.id] = struct{}{}
}

// forget drops everything.
func (c *dirCache) forget() {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.clearLocked()
	c.mu.Unlock()
}

func (c *dirCache) clearLocked() {
	if len(c.byPath) > 0 {
		clear(c.byPath)
		clear(c.ids)
	}
}

// rowChanging is the writer's pre-update hook.
func (c *dirCache) rowChanging(d sqlite.SQLitePreUpdateData) {
	if d.Op == sqlite3.SQLITE_INSERT || d.TableName != "entries" {
		return
	}
	c.mu.Lock()
	if _, ok := c.ids[d.OldRowID]; ok {
		c.clearLocked()
	}
	c.mu.Unlock()
}

// seen records the writer's data_version, forgetting everything when it
// moved: another connection committed since the last transaction.
func (c *dirCache) seen(version int64) {
	c.mu.Lock()
	if version != c.version {
		c.clearLocked()
		c.version = version
	}
	c.mu.Unlock()
}

// checkDirs makes t's use of the directory cache safe against other
// connections' commits; once per transaction.
func (t *tx) checkDirs() error {
	if t.dirsChecked {
		return nil
	}
	var v int64
	if err := t.queryRow(nil, `PRAGMA data_version`).Scan(&v); err != nil {
		return err
	}
	t.db.dirs.seen(v)
	t.dirsChecked = true
	return nil
}

// hookedConnector opens the writer's connections with dirs' hooks set.
type hookedConnector struct {
	driver.Connector
	dirs *dirCache
}

// rowHooks is what modernc's connections offer for the hooks.
type rowHooks interface {
	RegisterPreUpdateHook(sqlite.PreUpdateHookFn)
	RegisterRollbackHook(sqlite.RollbackHookFn)
}

func (h hookedConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := h.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	hooks, ok := conn.(rowHooks)
	if !ok {
		conn.Close()
		return nil, errors.New("catalog: this SQLite driver has no pre-update hook")
	}
	hooks.RegisterPreUpdateHook(h.dirs.rowChanging)
	hooks.RegisterRollbackHook(h.dirs.forget)
	h.dirs.seen(-1) // a new connection counts data_version afresh
	return conn, nil
}
