package catalog

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"syscall"
	"time"

	"shoal"
)

// tx is a write transaction whose statements are counted as round trips.
// Its statements run under the transaction's own context, whatever
// context a caller passes: in a batch (see committer) one caller's
// cancelled request must not interrupt, and so roll back, the statements
// of the others.
type tx struct {
	db     *DB
	tx     *sql.Tx
	ctx    context.Context // the transaction's; see stmtCtx
	treeOp int64           // the tree operation this transaction is part of (0: none)
	// dirsChecked: the directory cache was checked against other
	// connections' commits in this transaction (see checkDirs).
	dirsChecked bool
	// bound are the cached statements bound to this transaction: binding
	// one (sql.Tx.StmtContext) allocates a new sql.Stmt each time, and a
	// batch runs the same few statements for each of its members.
	bound map[*sql.Stmt]*sql.Stmt
	// wrote counts the statements that changed something (see
	// committer.runShared).
	wrote int
}

// stmt is s bound to t, once per transaction.
func (t *tx) stmt(ctx context.Context, s *sql.Stmt) *sql.Stmt {
	if b, ok := t.bound[s]; ok {
		return b
	}
	b := t.tx.StmtContext(ctx, s)
	if t.bound == nil {
		t.bound = make(map[*sql.Stmt]*sql.Stmt, 8)
	}
	t.bound[s] = b
	return b
}

// stmtCtx is the context of t's statements: t's own, except for SQLite,
// where it cannot end: modernc's driver starts a goroutine per statement
// to interrupt it when its context ends, and SQLite runs in this process
// (no network to hang on); the transaction itself still ends with t.ctx
// (database/sql rolls it back).
func (t *tx) stmtCtx() context.Context {
	if t.db.d.name() == "sqlite" {
		return context.Background()
	}
	return t.ctx
}

// steadyCtx is ctx, except for SQLite, where it is a context that cannot
// end: database/sql and modernc each watch a cancellable context with a
// goroutine of their own (per transaction, per query), and SQLite runs in
// this process, with nothing to hang on but its write lock, which
// BusyTimeout bounds. Write transactions begin under it (their statements
// run under one too, see stmtCtx), and so do reads of one row by a unique
// key, which cannot last: a Stat took 14.8–18.3 µs under md's context,
// 9.6–13.3 µs under this one (BenchmarkStatSQLite).
func (db *DB) steadyCtx(ctx context.Context) context.Context {
	if db.d.name() == "sqlite" {
		return context.WithoutCancel(ctx)
	}
	return ctx
}

func (t *tx) exec(_ context.Context, q string, args ...any) (res sql.Result, err error) {
	t.db.trips.Add(1)
	ctx := t.stmtCtx()
	if s := t.db.writeStmts.get(ctx, q); s != nil {
		res, err = t.stmt(ctx, s).ExecContext(ctx, args...)
	} else {
		res, err = t.tx.ExecContext(ctx, q, args...)
	}
	if err == nil {
		// A statement that failed changed nothing: both engines undo it
		// whole.
		t.wrote++
	}
	return res, err
}

func (t *tx) query(_ context.Context, q string, args ...any) (*sql.Rows, error) {
	t.db.trips.Add(1)
	ctx := t.stmtCtx()
	if s := t.db.writeStmts.get(ctx, q); s != nil {
		return t.stmt(ctx, s).QueryContext(ctx, args...)
	}
	return t.tx.QueryContext(ctx, q, args...)
}

func (t *tx) queryRow(_ context.Context, q string, args ...any) *sql.Row {
	t.db.trips.Add(1)
	ctx := t.stmtCtx()
	if s := t.db.writeStmts.get(ctx, q); s != nil {
		return t.stmt(ctx, s).QueryRowContext(ctx, args...)
	}
	return t.tx.QueryRowContext(ctx, q, args...)
}

// bounded gives a call to a MySQL server a deadline of CallTimeout at
// most: md passes its server's lifetime as the context (so that long
// tree operations are not cut), and a hung server or a network that
// drops packets would otherwise hold the call, and every call queued
// for a connection behind it, for ever. SQLite runs in this process and
// has nothing to hang on but its write lock, which BusyTimeout bounds.
func (db *DB) bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	if db.d.name() == "sqlite" {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, db.opts.CallTimeout)
}

// rowSet is what the scanners read: *sql.Rows (in a transaction) or
// *rows.
type rowSet interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close() error
}

// rows are a query's rows; Close ends the query's deadline too.
type rows struct {
	*sql.Rows
	cancel context.CancelFunc
	closed bool
	err    error // Rows.Err as it was when closed
}

// Close reads Err before it ends the deadline: database/sql watches the
// query's context from a goroutine, and a cancel it sees after Close may
// be recorded as the rows' error (at random: it selects between the
// two), so Err after Close would say "context canceled" of a read that
// had succeeded.
func (r *rows) Close() error {
	if r.closed {
		return nil
	}
	err := r.Rows.Close()
	r.err = r.Rows.Err()
	r.closed = true
	r.cancel()
	return err
}

func (r *rows) Err() error {
	if r.closed {
		return r.err
	}
	return r.Rows.Err()
}

// query runs a read, bounded (see bounded) until its rows are closed.
func (db *DB) query(ctx context.Context, q string, args ...any) (*rows, error) {
	db.trips.Add(1)
	ctx, cancel := db.bounded(ctx)
	var rs *sql.Rows
	var err error
	if s := db.readStmts.get(ctx, q); s != nil {
		rs, err = s.QueryContext(ctx, args...)
	} else {
		rs, err = db.read.QueryContext(ctx, q, args...)
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return &rows{Rows: rs, cancel: cancel}, nil
}

// inTx runs fn in a write transaction, committing if it returns nil. A
// deadlock re-runs fn from the start (up to TxRetries times); any error
// leaves nothing changed. Errors are mapped to *shoal.Error with op/path.
// Concurrent calls share transactions (see committer): fn may run more
// than once, and must set everything it reports afresh each time.
func (db *DB) inTx(ctx context.Context, op, path string, fn func(t *tx) error) error {
	if db.group != nil {
		return db.group.run(ctx, op, path, false, fn)
	}
	return db.soloTx(ctx, op, path, fn)
}

// txStarting calls the start ctx carries (shoal.WithTxStart): the
// transaction it is for is about to begin.
func txStarting(ctx context.Context) {
	if start := shoal.TxStart(ctx); start != nil {
		start()
	}
}

// inTxAlone is inTx for long or bulk transactions: they take their turn
// with the batches but share their transaction with nobody.
func (db *DB) inTxAlone(ctx context.Context, op, path string, fn func(t *tx) error) error {
	if db.group != nil {
		return db.group.run(ctx, op, path, true, fn)
	}
	return db.soloTx(ctx, op, path, fn)
}

// soloTx runs fn in a transaction of its own, re-running it after a lost
// create race or a deadlock.
func (db *DB) soloTx(ctx context.Context, op, path string, fn func(t *tx) error) error {
	txStarting(ctx)
	var err error
	wait := busyWait
	for attempt := 0; attempt <= db.opts.TxRetries; {
		err = db.tryTx(ctx, fn)
		if err == nil {
			db.space.wrote()
			return nil
		}
		if errors.Is(err, errBusy) {
			// A large tree operation holds the path: wait for it (the
			// wait does not count as an attempt).
			t := time.NewTimer(wait/2 + rand.N(wait/2+1))
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
			}
			wait = min(2*wait, busyWaitMax)
			if ctx.Err() != nil {
				break
			}
			continue
		}
		attempt++
		if errors.Is(err, errRace) && ctx.Err() == nil {
			continue
		}
		var se *shoal.Error
		if errors.As(err, &se) {
			return err // a decision made by fn, not a driver failure
		}
		if db.d.classify(err) != errRetry || ctx.Err() != nil {
			break
		}
	}
	if ctx.Err() != nil {
		// database/sql rolls back a transaction whose context ended and
		// then reports sql.ErrTxDone, which names no cause.
		return shoal.E(op, path, shoal.KindUnavailable, errors.Join(ctx.Err(), err))
	}
	return db.fail(op, path, err)
}

func (db *DB) tryTx(ctx context.Context, fn func(t *tx) error) error {
	ctx, cancel := db.bounded(ctx)
	defer cancel()
	db.trips.Add(1)
	stx, err := db.write.BeginTx(db.steadyCtx(ctx), nil)
	if err != nil {
		return err
	}
	t := &tx{db: db, tx: stx, ctx: ctx}
	if err := fn(t); err != nil {
		stx.Rollback()
		return err
	}
	db.trips.Add(1)
	if err := stx.Commit(); err != nil {
		return &commitError{err}
	}
	db.commits.Add(1)
	return nil
}

// commitError is a failed COMMIT: unlike a failure before it, whether the
// transaction took effect may be unknown, so a batch does not run it again.
type commitError struct{ err error }

func (e *commitError) Error() string { return e.err.Error() }
func (e *commitError) Unwrap() error { return e.err }

// fail turns a driver error into a *shoal.Error. Duplicate keys that fn
// did not anticipate (a concurrent create won the race) are KindExist;
// callers that need another kind map errDuplicate themselves via isDup.
func (db *DB) fail(op, path string, err error) error {
	if err == nil {
		return nil
	}
	var se *shoal.Error
	if errors.As(err, &se) {
		return err
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded) && db.d.name() != "sqlite":
		// Say which limit an operator can change (see bounded).
		return shoal.E(op, path, shoal.KindUnavailable, fmt.Errorf("the catalog did not answer within %v (catalog.call_timeout) or the request's deadline: %w",
			db.opts.CallTimeout, err))
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return shoal.E(op, path, shoal.KindUnavailable, err)
	case isNetErr(err):
		return shoal.E(op, path, shoal.KindUnavailable, err)
	}
	switch db.d.classify(err) {
	case errFull:
		return db.space.full(op, path, err)
	case errDuplicate:
		return shoal.E(op, path, shoal.KindExist, err)
	case errUnavailable, errRetry:
		if db.space.low() {
			// SQLite reports some writes that found no room as I/O errors.
			return db.space.full(op, path, err)
		}
		return shoal.E(op, path, shoal.KindUnavailable, err)
	}
	return shoal.E(op, path, shoal.KindOther, err)
}

func (db *DB) isDup(err error) bool { return err != nil && db.d.classify(err) == errDuplicate }

// isNetErr reports errors that mean the database server cannot be
// reached: whatever the driver, md should answer 503.
func isNetErr(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	return strings.Contains(err.Error(), "sql: database is closed")
}

// placeholders returns "?,?,…" with n marks.
func placeholders(n int) string {
	if n <= 0 {
		return ""
	}
	return strings.Repeat("?,", n-1) + "?"
}

func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }
