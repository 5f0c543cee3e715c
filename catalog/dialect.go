package catalog

import (
	"context"
	"database/sql"
)

// dialect is what differs between SQL engines: how to open them, their
// schema DDL, an upsert, and how their errors read. Everything else is the
// shared engine.
type dialect interface {
	name() string
	// open returns the pool for reads and the pool for writes (which may be
	// the same).
	open(ctx context.Context, target string, o Options) (read, write *sql.DB, err error)
	// defaultConns is Options.MaxOpenConns when it is zero.
	defaultConns() int
	// migrations is the schema, one list of statements per version.
	migrations() [][]string
	// lockSchema serialises schema migration between processes; unlock
	// releases the lock.
	lockSchema(ctx context.Context, conn *sql.Conn) (unlock func(), err error)
	// lockSuffix ends a SELECT in a write transaction that must lock the
	// rows it reads: exclusive for rows the transaction changes, shared
	// for ancestors that must not move meanwhile.
	lockSuffix(exclusive bool) string
	// lockOnDup ends an INSERT of a new entry that may find its path
	// taken, made so that it then changes nothing and reports 0 as the
	// inserted id ("": it fails as a duplicate). MySQL: the row found is
	// locked exclusively, as the read that follows would lock it; a
	// failed insert locks it shared, and two such inserts each waiting to
	// lock the row exclusively deadlock.
	lockOnDup() string
	// deleteReturning says whether the server has DELETE … RETURNING.
	deleteReturning(ctx context.Context, db *sql.DB) (bool, error)
	// upsertServer is the statement that inserts or refreshes a server row
	// (id, url, pool, state, free, total, last_seen_ns).
	upsertServer() string
	// writers is how many write transactions may run at once: the size of
	// the committer's slots (SQLite: its one writer connection).
	writers(o Options) int
	// keyedByHash says whether entries are found by path_hash (MySQL)
	// rather than by path (SQLite): see pathKey.
	keyedByHash() bool
	// releaseSavepoints says whether a batch releases each member's
	// savepoint once it succeeded (SQLite: the statement journal is then
	// reset instead of growing with the batch) or leaves them to the
	// commit (MySQL: a round trip saved; naming a savepoint again
	// replaces it).
	releaseSavepoints() bool
	// classify returns the error kind of a driver error, and whether it is
	// a transient conflict worth retrying the transaction for.
	classify(err error) (k errClass)
}

// errClass is a driver error as the engine sees it.
type errClass uint8

const (
	errOther       errClass = iota
	errDuplicate            // unique or primary-key violation
	errUnavailable          // cannot reach the database or it is busy
	errRetry                // deadlock or serialisation failure: run the transaction again
	errFull                 // the database's disk (or table space) is full
)
