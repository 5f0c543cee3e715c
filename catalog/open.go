// Package catalog is shoal's SQL catalog: one engine over database/sql
// implementing shoal.Catalog, with thin dialects for SQLite
// (modernc.org/sqlite, embedded, single node) and MySQL/MariaDB (shared by
// many md replicas).
//
// Paths are stored whole, with a unique 16-byte hash, so that a lookup at
// any depth is one indexed query; a directory move rewrites the paths of
// its subtree in the same transaction.
//
// catalog must not import md or cache: they stand on it, not it on them.
package catalog

import (
	"context"
	"database/sql"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"shoal"
)

// Defaults for Options fields left zero.
const (
	// DefaultMaxOpenConns is the MySQL/MariaDB pool size: queries wait on
	// the network, so more connections than cores pay off. An SQLite
	// catalog's read pool is SQLiteReaders instead.
	DefaultMaxOpenConns    = 16
	DefaultConnMaxLifetime = 5 * time.Minute
	DefaultBusyTimeout     = 10 * time.Second
	DefaultTxRetries       = 5
	// DefaultCallTimeout is long enough for any transaction or query
	// shoal sends (big tree operations run in chunks) to a loaded server,
	// short enough that a client retrying after the 503 beats waiting.
	DefaultCallTimeout = 30 * time.Second
)

// Options configure Open.
type Options struct {
	// DSN is "sqlite:PATH" or "mysql://USER:PASS@HOST:PORT/DB" (also
	// "mysql://USER:PASS@unix(/path/to.sock)/DB" or "?socket=/path").
	DSN             string
	MaxOpenConns    int           // read pool size (SQLite) or whole pool (MySQL); zero: per dialect
	MaxIdleConns    int           // idle connections kept; zero: MaxOpenConns
	ConnMaxLifetime time.Duration // recycle connections after this
	BusyTimeout     time.Duration // SQLite: how long a writer waits for the lock
	// CallTimeout (MySQL) bounds each query, and each attempt of a write
	// transaction, waiting for a connection included: past it the call
	// ends with KindUnavailable (a hung server, a network that drops
	// packets). Waiting for a large tree operation to let go of a path
	// does not count; Open's migrations are exempt.
	CallTimeout time.Duration
	TxRetries   int // times a transaction is re-run after a deadlock
	// SoloCommits turns group commit off: every write transaction then
	// commits alone, on its own connection (see committer).
	SoloCommits bool
	// WriteBatches is how many shared transactions MySQL runs at once
	// (SQLite: always one); zero: DefaultWriteBatches.
	WriteBatches int
	// BigTree is the number of entries above which COPY, MOVE and DELETE
	// of a directory run in chunks (see treeops.go); zero: DefaultBigTree.
	BigTree int
	// TreeChunk bounds the entries one chunk reads; zero: its default.
	TreeChunk int

	// SQLite's log: the frames past which it is started over,
	// and the size its file is cut to then (see checkpointer); tests set
	// them small.
	logRestartFrames int
	logSizeLimit     int64
	dirs             *dirCache // the writer's (SQLite)
}

// DefaultWriteBatches is Options.WriteBatches when zero.
const DefaultWriteBatches = 4

// SQLiteReaders is the read pool of an SQLite catalog when MaxOpenConns is
// zero: GOMAXPROCS, at least 4. modernc's SQLite runs a query on the
// calling goroutine, so readers beyond the cores add no parallelism, while
// each keeps its own page cache (up to 2 MiB, SQLite's default cache_size):
// 16 readers were about 30 MiB of the 70 MiB RSS of shoal all under a
// 64-connection HEAD load, and gave no req/s over 4 beyond the run-to-run
// spread (README, Memory on small boards).
func SQLiteReaders() int { return max(4, runtime.GOMAXPROCS(0)) }

func (o *Options) setDefaults(d dialect) {
	if o.MaxOpenConns <= 0 {
		o.MaxOpenConns = d.defaultConns()
	}
	if o.MaxIdleConns <= 0 {
		o.MaxIdleConns = o.MaxOpenConns
	}
	if o.ConnMaxLifetime <= 0 {
		o.ConnMaxLifetime = DefaultConnMaxLifetime
	}
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = DefaultBusyTimeout
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.TxRetries <= 0 {
		o.TxRetries = DefaultTxRetries
	}
	if o.WriteBatches <= 0 {
		o.WriteBatches = DefaultWriteBatches
	}
	if o.BigTree <= 0 {
		o.BigTree = DefaultBigTree
	}
	if o.TreeChunk <= 0 {
		o.TreeChunk = defaultTreeChunk
	}
	if o.logRestartFrames <= 0 {
		o.logRestartFrames = walRestartFrames
	}
	if o.logSizeLimit <= 0 {
		o.logSizeLimit = walSizeLimit
	}
}

// DB is the SQL catalog. It is safe for concurrent use.
type DB struct {
	d        dialect
	key      pathKey // how entries are found by path
	read     *sql.DB // reads; never waits on writers (SQLite WAL)
	write    *sql.DB // transactions (one connection for SQLite)
	opts     Options
	trips    atomic.Uint64
	commits  atomic.Uint64 // write transactions committed
	statStmt *sql.Stmt
	space    spaceWatch
	group    *committer // nil: group commit off
	// deleteReturning: the database has DELETE … RETURNING (SQLite,
	// MariaDB; not MySQL).
	deleteReturning bool

	readStmts, writeStmts *stmtCache    // nil: statements are sent as text
	dirs                  *dirCache     // SQLite; nil: none
	ckpt                  *checkpointer // SQLite

	owner    string // this handle, as the owner of tree operations
	treeCtx  context.Context
	treeStop context.CancelFunc
	treeWG   sync.WaitGroup // treeOpsLoop and background collections
	// collecting counts background collections (tests wait for them).
	collecting sync.WaitGroup
}

var _ shoal.Catalog = (*DB)(nil)

// Open connects to the catalog named by o.DSN and brings its schema up to
// date. Several processes may open one catalog at once.
func Open(ctx context.Context, o Options) (*DB, error) {
	// SQLite answers "busy" at once, whatever busy_timeout says, to a
	// connection that would deadlock: several processes opening a new
	// catalog together (switching it to WAL, migrating) meet that. They
	// try again for as long as a writer would wait.
	wait := o.BusyTimeout
	if wait <= 0 {
		wait = DefaultBusyTimeout
	}
	deadline := time.Now().Add(wait)
	for {
		db, err := openOnce(ctx, o)
		if err == nil || !sqliteBusy(err) || time.Now().After(deadline) || ctx.Err() != nil {
			return db, err
		}
		time.Sleep(time.Duration(20+rand.IntN(30)) * time.Millisecond)
	}
}

func openOnce(ctx context.Context, o Options) (*DB, error) {
	const op = "catalog.Open"
	db, err := connect(ctx, o)
	if err != nil {
		return nil, err
	}
	if err := db.migrate(ctx, db.d.migrations()); err != nil {
		db.Close()
		return nil, err
	}
	if db.statStmt, err = db.read.PrepareContext(ctx, db.key.statHidden); err != nil {
		db.Close()
		return nil, db.fail(op, "", err)
	}
	if db.deleteReturning, err = db.d.deleteReturning(ctx, db.read); err != nil {
		db.Close()
		return nil, db.fail(op, "", err)
	}
	db.treeWG.Add(1)
	go db.treeOpsLoop()
	return db, nil
}

// connect opens the connection pools of the catalog named by o.DSN,
// leaving its schema as it is.
func connect(ctx context.Context, o Options) (*DB, error) {
	const op = "catalog.Open"
	var d dialect
	var target string
	switch {
	case strings.HasPrefix(o.DSN, "sqlite:"):
		d, target = sqliteDialect{}, strings.TrimPrefix(o.DSN, "sqlite:")
		if target == "" {
			return nil, shoal.Errorf(op, shoal.KindInvalid, "sqlite DSN needs a file path: sqlite:PATH")
		}
	case strings.HasPrefix(o.DSN, "mysql://"):
		d, target = mysqlDialect{}, strings.TrimPrefix(o.DSN, "mysql://")
	default:
		return nil, shoal.Errorf(op, shoal.KindInvalid, "catalog DSN %q: want sqlite:PATH or mysql://USER:PASS@HOST:PORT/DB", redactDSN(o.DSN))
	}
	o.setDefaults(d)
	db := &DB{d: d, opts: o, owner: newOwner(), key: newPathKey(d.keyedByHash())}
	db.treeCtx, db.treeStop = context.WithCancel(context.Background())
	if d.name() == "sqlite" {
		db.space.dir = sqliteDir(target)
		db.dirs = newDirCache()
		o.dirs = db.dirs
	}
	var err error
	if db.read, db.write, err = d.open(ctx, target, o); err != nil {
		return nil, db.fail(op, "", err)
	}
	if d.name() == "sqlite" {
		db.readStmts, db.writeStmts = newStmtCache(db.read, false), newStmtCache(db.write, true)
		dsn, _, err := sqliteDSN(target, o)
		if err == nil {
			db.ckpt, err = newCheckpointer(dsn, db.write, o.logRestartFrames, db.commits.Load)
		}
		if err != nil {
			db.Close()
			return nil, db.fail(op, "", err)
		}
	}
	if !o.SoloCommits {
		db.group = newCommitter(db, d.writers(o))
	}
	return db, nil
}

// redactDSN hides a password in a DSN for error messages.
func redactDSN(dsn string) string {
	at := strings.LastIndexByte(dsn, '@')
	scheme := strings.Index(dsn, "://")
	if at < 0 || scheme < 0 || at < scheme {
		return dsn
	}
	userinfo := dsn[scheme+3 : at]
	if u, _, ok := strings.Cut(userinfo, ":"); ok {
		return dsn[:scheme+3] + u + ":***" + dsn[at:]
	}
	return dsn
}

// RoundTrips is the number of SQL statements (queries, execs, begins,
// commits) sent so far: md metrics and benchmarks report it.
func (db *DB) RoundTrips() uint64 { return db.trips.Load() }

// Dialect names the SQL engine: "sqlite" or "mysql".
func (db *DB) Dialect() string { return db.d.name() }

// Close releases the connections.
func (db *DB) Close() error {
	db.treeStop()
	db.treeWG.Wait()
	if db.group != nil {
		db.group.close()
	}
	if db.statStmt != nil {
		db.statStmt.Close()
	}
	db.readStmts.close()
	db.writeStmts.close()
	db.ckpt.close()
	err := db.read.Close()
	if db.write != db.read {
		if werr := db.write.Close(); err == nil {
			err = werr
		}
	}
	return err
}
