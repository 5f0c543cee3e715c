package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"

	"shoal/internal/sqlitewal"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// sqliteDialect is the embedded catalog: a WAL database file with one
// writer connection (BEGIN IMMEDIATE, so writers queue on busy_timeout
// instead of failing on lock upgrade) and a pool of readers that never
// wait on it. synchronous=FULL makes a commit durable before it returns
// (the WAL is fsync'd at every commit, and readers see a transaction only
// once it is): a batch of the group commit (see committer) is one such
// commit. The writer opens the database through internal/sqlitewal's
// VFS, which writes a commit's log pages in one system call (safe because
// of synchronous=FULL: see there).
type sqliteDialect struct{}

func (sqliteDialect) name() string { return "sqlite" }

func (sqliteDialect) defaultConns() int { return SQLiteReaders() }

// sqliteDSN is the driver's DSN for the database file at path (made
// absolute), with the pragmas every connection gets.
func sqliteDSN(path string, o Options) (dsn, abs string, err error) {
	abs, err = filepath.Abs(path)
	if err != nil {
		return "", "", err
	}
	pragmas := url.Values{}
	pragmas.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", o.BusyTimeout.Milliseconds()))
	pragmas.Add("_pragma", "journal_mode(WAL)")
	pragmas.Add("_pragma", "synchronous(FULL)")
	pragmas.Add("_pragma", "foreign_keys(1)")
	return "file:" + (&url.URL{Path: abs}).EscapedPath() + "?" + pragmas.Encode(), abs, nil
}

func (sqliteDialect) open(ctx context.Context, path string, o Options) (read, write *sql.DB, err error) {
	dsn, abs, err := sqliteDSN(path, o)
	if err != nil {
		return nil, nil, err
	}
	if err := ownerOnly(abs); err != nil {
		return nil, nil, err
	}
	// No checkpoint at commit: a checkpoint copies the WAL into the
	// database file and fsyncs it, hundreds of milliseconds on a busy
	// disk, during which the writer would wait; checkpointer runs them
	// on a connection of its own.
	if err := sqlitewal.Register(); err != nil {
		return nil, nil, err
	}
	connector, err := sqlite.NewConnector(dsn + fmt.Sprintf("&_pragma=wal_autocheckpoint(0)&_pragma=journal_size_limit(%d)&_txlock=immediate&vfs=%s", o.logSizeLimit, sqlitewal.Name))
	if err != nil {
		return nil, nil, err
	}
	if o.dirs != nil {
		connector = hookedConnector{connector, o.dirs}
	}
	write = sql.OpenDB(connector)
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxLifetime(0)
	if err := write.PingContext(ctx); err != nil {
		write.Close()
		return nil, nil, err
	}
	read, err = sql.Open("sqlite", dsn+"&_pragma=query_only(1)")
	if err != nil {
		write.Close()
		return nil, nil, err
	}
	read.SetMaxOpenConns(o.MaxOpenConns)
	read.SetMaxIdleConns(o.MaxIdleConns)
	read.SetConnMaxLifetime(o.ConnMaxLifetime)
	return read, write, nil
}

// lockSchema: the migration runs in one BEGIN IMMEDIATE transaction on the
// writer, which is the lock.
func (sqliteDialect) lockSchema(ctx context.Context, conn *sql.Conn) (func(), error) {
	return func() {}, nil
}

func (sqliteDialect) upsertServer() string {
	return `INSERT INTO servers (id, url, pool, state, free, total, last_seen_ns) VALUES (?,?,?,?,?,?,?)
ON CONFLICT(id) DO UPDATE SET url=excluded.url, pool=excluded.pool, free=excluded.free,
total=excluded.total, last_seen_ns=excluded.last_seen_ns`
}

func (sqliteDialect) classify(err error) errClass {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return errOther
	}
	switch se.Code() {
	case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
		return errDuplicate
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_FULL:
		return errFull
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_IOERR:
		return errUnavailable
	}
	return errOther
}

// sqliteBusy reports SQLITE_BUSY or SQLITE_LOCKED (any extended code).
func sqliteBusy(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	c := se.Code() & 0xff
	return c == sqlite3.SQLITE_BUSY || c == sqlite3.SQLITE_LOCKED
}

func (sqliteDialect) migrations() [][]string {
	return [][]string{{
		`CREATE TABLE entries (
			id INTEGER PRIMARY KEY AUTOINCREMENT,
			parent_id INTEGER NOT NULL,
			name TEXT NOT NULL,
			path TEXT NOT NULL,
			path_hash BLOB NOT NULL,
			is_dir INTEGER NOT NULL,
			size INTEGER NOT NULL DEFAULT 0,
			mtime_ns INTEGER NOT NULL,
			ctime_ns INTEGER NOT NULL,
			version INTEGER NOT NULL DEFAULT 1,
			adler32 INTEGER NOT NULL DEFAULT 0,
			md5 BLOB,
			sha256 BLOB,
			inline BLOB,
			layout TEXT NOT NULL DEFAULT ''
		)`,
		`CREATE UNIQUE INDEX entries_path_hash ON entries (path_hash)`,
		`CREATE UNIQUE INDEX entries_parent_name ON entries (parent_id, name)`,
		`CREATE INDEX entries_path ON entries (path)`,
		`CREATE TABLE replicas (
			id INTEGER PRIMARY KEY AUTOINCREMENT,
			entry_id INTEGER NOT NULL REFERENCES entries (id),
			server TEXT NOT NULL,
			object TEXT NOT NULL,
			shard INTEGER NOT NULL DEFAULT 0,
			size INTEGER NOT NULL DEFAULT 0,
			sum INTEGER NOT NULL DEFAULT 0
		)`,
		`CREATE INDEX replicas_entry ON replicas (entry_id)`,
		`CREATE INDEX replicas_server_object ON replicas (server, object)`,
		`CREATE TABLE props (
			entry_id INTEGER NOT NULL REFERENCES entries (id),
			space TEXT NOT NULL,
			name TEXT NOT NULL,
			value TEXT NOT NULL,
			PRIMARY KEY (entry_id, space, name)
		)`,
		`CREATE TABLE servers (
			id TEXT PRIMARY KEY,
			url TEXT NOT NULL,
			pool TEXT NOT NULL,
			state TEXT NOT NULL,
			free INTEGER NOT NULL,
			total INTEGER NOT NULL,
			last_seen_ns INTEGER NOT NULL
		)`,
		`CREATE TABLE pools (
			name TEXT PRIMARY KEY,
			layout TEXT NOT NULL
		)`,
		`CREATE TABLE uploads (
			id TEXT PRIMARY KEY,
			path TEXT NOT NULL,
			servers TEXT NOT NULL,
			object TEXT NOT NULL,
			layout TEXT NOT NULL,
			create_only INTEGER NOT NULL,
			expires_ns INTEGER NOT NULL
		)`,
		`CREATE INDEX uploads_expires ON uploads (expires_ns)`,
		`CREATE TABLE garbage (
			id INTEGER PRIMARY KEY AUTOINCREMENT,
			server TEXT NOT NULL,
			object TEXT NOT NULL,
			not_before_ns INTEGER NOT NULL
		)`,
		`CREATE INDEX garbage_server_due ON garbage (server, not_before_ns)`,
	}, sqlitePoolsV2, sqliteReplicaListV3, sqliteUploadsV4, sqliteLocksV5, sqliteUploadsV6, sqliteJobsV7, sqliteQuotasV8, sqliteTreeOpsV9,
		sqliteEntriesByPathV10}
}

// sqliteEntriesByPathV10: entries are found by path through a unique
// index on path, in place of the one on path_hash (see pathKey).
var sqliteEntriesByPathV10 = []string{
	`DROP INDEX entries_path_hash`,
	`DROP INDEX entries_path`,
	`CREATE UNIQUE INDEX entries_path ON entries (path)`,
}

func (sqliteDialect) writers(Options) int { return 1 }

func (sqliteDialect) releaseSavepoints() bool { return true }

// lockOnDup: the one writer locks nothing row by row; a duplicate fails.
func (sqliteDialect) lockOnDup() string { return "" }

func (sqliteDialect) keyedByHash() bool { return false }

// lockSuffix: the single writer connection already serialises writers.
func (sqliteDialect) lockSuffix(bool) string { return "" }

// deleteReturning: SQLite has had RETURNING since 3.35 (2021).
func (sqliteDialect) deleteReturning(context.Context, *sql.DB) (bool, error) { return true, nil }

// ownerOnly creates the database file with mode 0600 before SQLite opens
// it (SQLite gives its -wal and -shm files the database file's mode), and
// takes group and other access away from files an older version created:
// the catalog holds small files' contents.
func ownerOnly(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	f.Close()
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o077 != 0 {
			if err := os.Chmod(p, fi.Mode().Perm()&0o700); err != nil {
				return err
			}
		}
	}
	return nil
}
