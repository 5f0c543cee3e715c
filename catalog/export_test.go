package catalog

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"shoal"
)

// ReadPoolSize is the read pool's connection limit, for tests.
func (db *DB) ReadPoolSize() int { return db.read.Stats().MaxOpenConnections }

// OpenAtVersion creates or opens the catalog named by dsn with its schema
// brought only up to version (older than the newest, to test migrations)
// and returns its write pool, for a test to fill in SQL as a binary of
// that version would have; closeFn releases it.
func OpenAtVersion(ctx context.Context, dsn string, version int) (write *sql.DB, closeFn func(), err error) {
	db, err := connect(ctx, Options{DSN: dsn})
	if err != nil {
		return nil, nil, err
	}
	if err := db.migrate(ctx, db.d.migrations()[:version]); err != nil {
		db.Close()
		return nil, nil, err
	}
	return db.write, func() { db.Close() }, nil
}

// CheckReplicaLists reports the first entry whose replica_list differs
// from its replica rows (ordered by shard, then id).
func (db *DB) CheckReplicaLists(ctx context.Context) error {
	return db.inTx(ctx, "CheckReplicaLists", "", func(t *tx) error {
		rows, err := t.query(ctx, `SELECT id, path, replica_list FROM entries`)
		if err != nil {
			return err
		}
		type row struct {
			id   int64
			path string
			list []byte
		}
		var all []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.id, &r.path, &r.list); err != nil {
				rows.Close()
				return err
			}
			all = append(all, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, r := range all {
			got, err := decodeReplicaList(r.list)
			if err != nil {
				return fmt.Errorf("%s: %w", r.path, err)
			}
			want, err := t.replicaRows(ctx, r.id)
			if err != nil {
				return err
			}
			if !slices.Equal(got, want) {
				return shoal.Errorf("CheckReplicaLists", shoal.KindCorrupt, "%s: replica_list %q = %v, replica rows %v", r.path, r.list, got, want)
			}
		}
		return nil
	})
}

// PathHash is the path_hash column's value for path.
var PathHash = pathHash
