package sqlitewal

import (
	"bytes"
	"database/sql"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"

	"modernc.org/libc"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// openDB opens the database at path: through this VFS when gathered, else
// through the host's; WAL, synchronous=FULL, as the catalog's writer.
func openDB(t *testing.T, path string, gathered bool, extra ...string) *sql.DB {
	t.Helper()
	if err := Register(); err != nil {
		t.Fatal(err)
	}
	dsn := "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=busy_timeout(5000)"
	if gathered {
		dsn += "&vfs=" + Name
	}
	for _, p := range extra {
		dsn += "&_pragma=" + p
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

// countWrites counts the writes that reach the host's VFS until the test ends.
func countWrites(t *testing.T) *atomic.Int64 {
	var n atomic.Int64
	writeThrough = func(tls *libc.TLS, pFile, zBuf uintptr, amt int32, off int64) int32 {
		n.Add(1)
		return hostWrite(tls, pFile, zBuf, amt, off)
	}
	t.Cleanup(func() { writeThrough = hostWrite })
	return &n
}

func mustExec(t *testing.T, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// insertRows commits n rows of size bytes each (row i's bytes repeat i)
// in one transaction.
func insertRows(t *testing.T, db *sql.DB, from, n, size int) error {
	t.Helper()
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for i := from; i < from+n; i++ {
		if _, err := tx.Exec(`INSERT INTO t (id, v) VALUES (?, ?)`, i, bytes.Repeat([]byte{byte(i)}, size)); err != nil {
			tx.Rollback()
			t.Fatal(err)
		}
	}
	return tx.Commit()
}

// checkRows reads rows [0, n) through db and checks each one's bytes.
func checkRows(t *testing.T, db *sql.DB, n, size int) {
	t.Helper()
	var count int
	if err := db.QueryRow(`SELECT count(*) FROM t`).Scan(&count); err != nil {
		t.Fatal(err)
	}
	if count != n {
		t.Fatalf("%d rows, want %d", count, n)
	}
	rows, err := db.Query(`SELECT id, v FROM t ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int
		var v []byte
		if err := rows.Scan(&id, &v); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(v, bytes.Repeat([]byte{byte(id)}, size)) {
			t.Fatalf("row %d: %d bytes, not its own", id, len(v))
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var ok string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&ok); err != nil || ok != "ok" {
		t.Fatalf("integrity_check: %q, %v", ok, err)
	}
}

// A commit's frames, two writes each through the host's VFS, reach the
// log in one write.
func TestCommitIsOneWrite(t *testing.T) {
	db := openDB(t, filepath.Join(t.TempDir(), "db"), true)
	mustExec(t, db, `CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB)`)
	writes := countWrites(t)
	// 12 rows of 2 KiB: about 7 pages, 14 writes without gathering.
	if err := insertRows(t, db, 0, 12, 2048); err != nil {
		t.Fatal(err)
	}
	if n := writes.Load(); n != 1 {
		t.Errorf("the commit made %d writes to the log, want 1", n)
	}
	checkRows(t, db, 12, 2048)
}

// Commits through the VFS, small and past what one write takes, are
// read whole by a connection of the host's own VFS, by the writer, and
// after a reopen.
func TestOthersReadWhatIsCommitted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	w := openDB(t, path, true)
	r := openDB(t, path, false, "query_only(1)")
	mustExec(t, w, `CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB)`)
	writes := countWrites(t)
	n := 0
	for _, rows := range []int{1, 3, 200, 1, 700, 2} { // 700 rows of 1 KiB: past maxGather
		if err := insertRows(t, w, n, rows, 1000); err != nil {
			t.Fatal(err)
		}
		n += rows
		checkRows(t, r, n, 1000)
	}
	if writes.Load() < 2 {
		t.Fatalf("%d writes through the host for about 1 MiB of log", writes.Load())
	}
	checkRows(t, w, n, 1000)
	w.Close()
	r.Close()
	checkRows(t, openDB(t, path, false), n, 1000)
}

// A transaction larger than the writer's cache spills frames to the log
// before it commits and reads them back through the same file.
func TestSpilledFramesReadBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	w := openDB(t, path, true, "cache_size(8)")
	mustExec(t, w, `CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB)`)
	tx, err := w.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 400; i++ {
		if _, err := tx.Exec(`INSERT INTO t (id, v) VALUES (?, ?)`, i, bytes.Repeat([]byte{byte(i)}, 900)); err != nil {
			t.Fatal(err)
		}
		if i%50 == 49 { // read the first rows, long since spilled
			var sum int
			if err := tx.QueryRow(`SELECT sum(length(v)) FROM t WHERE id < 40`).Scan(&sum); err != nil {
				t.Fatal(err)
			}
			if sum != 40*900 {
				t.Fatalf("after %d rows: the first 40 sum %d bytes, want %d", i+1, sum, 40*900)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	checkRows(t, w, 400, 900)
	checkRows(t, openDB(t, path, false), 400, 900)
}

// A write the host refuses fails the commit it belongs to, which then
// changes nothing; the next commit succeeds.
func TestFailedWriteFailsTheCommit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	w := openDB(t, path, true)
	mustExec(t, w, `CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB)`)
	if err := insertRows(t, w, 0, 5, 100); err != nil {
		t.Fatal(err)
	}
	writeThrough = func(*libc.TLS, uintptr, uintptr, int32, int64) int32 { return sqlite3.SQLITE_FULL }
	err := insertRows(t, w, 5, 5, 100)
	writeThrough = hostWrite
	var se *sqlite.Error
	if !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_FULL {
		t.Fatalf("commit with a refused write: %v, want SQLITE_FULL", err)
	}
	checkRows(t, w, 5, 100)
	checkRows(t, openDB(t, path, false), 5, 100)
	if err := insertRows(t, w, 5, 5, 100); err != nil {
		t.Fatalf("the commit after: %v", err)
	}
	checkRows(t, openDB(t, path, false), 10, 100)
}
