package catalog

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"shoal"
)

// migrate brings the schema to version len(migs) (Open: the newest): each
// dialect's migrations()[i] is version i+1, recorded in schema_version.
// A catalog at a newer version than len(migs) is refused. The dialect's
// schema lock (MySQL GET_LOCK; SQLite the writer's BEGIN IMMEDIATE) lets
// several md processes open one catalog at once.
func (db *DB) migrate(ctx context.Context, migs [][]string) error {
	const op = "catalog.migrate"
	conn, err := db.write.Conn(ctx)
	if err != nil {
		return db.fail(op, "", err)
	}
	defer conn.Close()
	unlock, err := db.d.lockSchema(ctx, conn)
	if err != nil {
		return db.fail(op, "", err)
	}
	defer unlock()
	for {
		done, err := db.migrateOne(ctx, conn, migs)
		if err != nil {
			return db.fail(op, "", err)
		}
		if done {
			return nil
		}
	}
}

// migrateOne applies the next missing version, if any, in a transaction
// (DDL is transactional in SQLite; in MySQL it commits implicitly, which
// the schema lock makes safe).
func (db *DB) migrateOne(ctx context.Context, conn *sql.Conn, migs [][]string) (done bool, err error) {
	sqlTx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer sqlTx.Rollback()
	if _, err := sqlTx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
		return false, err
	}
	var version int
	if err := sqlTx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_version`).Scan(&version); err != nil {
		return false, err
	}
	if version > len(migs) {
		return false, shoal.Errorf("catalog.migrate", shoal.KindOther,
			"catalog schema version %d is newer than this binary knows (%d)", version, len(migs))
	}
	if version == len(migs) {
		return true, sqlTx.Commit()
	}
	for _, stmt := range migs[version] {
		if _, err := sqlTx.ExecContext(ctx, stmt); err != nil {
			return false, fmt.Errorf("schema version %d: %w", version+1, err)
		}
	}
	if version == 0 {
		now := time.Now().UnixNano()
		if _, err := sqlTx.ExecContext(ctx, `INSERT INTO entries (id, parent_id, name, path, path_hash, is_dir, mtime_ns, ctime_ns)
			VALUES (1, 0, '', '/', ?, 1, ?, ?)`, pathHash("/"), now, now); err != nil {
			return false, err
		}
	}
	if _, err := sqlTx.ExecContext(ctx, `INSERT INTO schema_version (version) VALUES (?)`, version+1); err != nil {
		return false, err
	}
	return false, sqlTx.Commit()
}
