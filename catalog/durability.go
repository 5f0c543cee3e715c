package catalog

import (
	"context"
	"fmt"
)

// Durability says whether the database makes every commit durable before
// it returns, and how: SQLite with synchronous=FULL (set by this package
// on its writer), MySQL/MariaDB when innodb_flush_log_at_trx_commit is 1
// (the server's setting: 0 and 2 flush the redo log about once a second,
// so a crash of the database host loses the last second of commits,
// acknowledged ones included). md warns at start when it is not.
func (db *DB) Durability(ctx context.Context) (durable bool, how string, err error) {
	if db.d.name() == "sqlite" {
		var mode int
		if err := db.write.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&mode); err != nil {
			return false, "", db.fail("catalog.Durability", "", err)
		}
		return mode >= 2, fmt.Sprintf("SQLite WAL, synchronous=%d (2: FULL, the WAL is fsync'd at every commit)", mode), nil
	}
	ctx, cancel := db.bounded(ctx)
	defer cancel()
	var v int
	if err := db.read.QueryRowContext(ctx, `SELECT @@innodb_flush_log_at_trx_commit`).Scan(&v); err != nil {
		return false, "", db.fail("catalog.Durability", "", err)
	}
	return v == 1, fmt.Sprintf("InnoDB, innodb_flush_log_at_trx_commit=%d (1: the redo log is flushed at every commit)", v), nil
}
