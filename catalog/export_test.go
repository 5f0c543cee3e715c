package catalog

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"shoal"
)

// WithSmallLog makes an SQLite catalog start its log over past 256 frames
// (1 MiB) and cut its file to 2 MiB then.
func WithSmallLog(o Options) Options {
	o.logRestartFrames, o.logSizeLimit = 256, 2<<20
	return o
}

// LogRestarts counts the RESTART checkpoints that completed.
func (db *DB) LogRestarts() uint64 { return db.ckpt.restarts.Load() }

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

// CheckQuotas reports the first quota whose counters differ from what its
// subtree holds and what the pending uploads charged to it reserve, or
// whose directory's quota mark is wrong.
func (db *DB) CheckQuotas(ctx context.Context) error {
	return db.inTx(ctx, "CheckQuotas", "", func(t *tx) error {
		rows, err := t.query(ctx, `SELECT q.dir_id, `+quotaCols+`, e.quota FROM quotas q JOIN entries e ON e.id = q.dir_id`)
		if err != nil {
			return err
		}
		type row struct {
			id   int64
			q    shoal.Quota
			mark bool
		}
		var all []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.id, &r.q.Dir, &r.q.Bytes, &r.q.Files, &r.q.UsedBytes, &r.q.UsedFiles, &r.q.Reserved, &r.mark); err != nil {
				rows.Close()
				return err
			}
			all = append(all, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		var marks, orphans int
		if err := t.queryRow(ctx, `SELECT COUNT(*) FROM entries WHERE quota = 1`).Scan(&marks); err != nil {
			return err
		}
		if err := t.queryRow(ctx, `SELECT COUNT(*) FROM quotas WHERE dir_id NOT IN (SELECT id FROM entries)`).Scan(&orphans); err != nil {
			return err
		}
		if marks != len(all) || orphans != 0 {
			return fmt.Errorf("%d directories marked with a quota, %d quotas of live directories, %d of removed ones", marks, len(all), orphans)
		}
		for _, r := range all {
			bytes, files, err := t.subtreeUsage(ctx, r.q.Dir)
			if err != nil {
				return err
			}
			var reserved int64
			if err := t.queryRow(ctx, `SELECT COALESCE(SUM(reserved), 0) FROM uploads WHERE quota_dirs LIKE ?`,
				fmt.Sprintf("%%,%d,%%", r.id)).Scan(&reserved); err != nil {
				return err
			}
			if !r.mark || bytes != r.q.UsedBytes || files != r.q.UsedFiles || reserved != r.q.Reserved {
				return fmt.Errorf("quota on %s = %+v (marked %v); its subtree holds %d bytes in %d entries, uploads reserve %d",
					r.q.Dir, r.q, r.mark, bytes, files, reserved)
			}
		}
		return nil
	})
}

// HoldWriters occupies every worker of the group commit with a
// transaction of its own that waits for release: meanwhile transactions
// queue, and once released they run as one batch (per worker).
func (db *DB) HoldWriters(t interface{ Fatal(...any) }) (release func()) {
	if db.group == nil {
		t.Fatal("group commit is off")
	}
	n := db.group.workers
	gate := make(chan struct{})
	started := make(chan struct{}, n)
	done := make(chan error, n)
	for range n {
		go func() {
			done <- db.inTxAlone(context.Background(), "hold", "", func(*tx) error {
				started <- struct{}{}
				<-gate
				return nil
			})
		}()
	}
	for range n {
		<-started
	}
	return func() {
		close(gate)
		for range n {
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
	}
}

// Queued is how many transactions wait for a batch.
func (db *DB) Queued() int {
	db.group.mu.Lock()
	defer db.group.mu.Unlock()
	return len(db.group.queue)
}

// ExecInTx runs the statement q in a write transaction: a driver error of
// one member of a batch.
func (db *DB) ExecInTx(ctx context.Context, q string) error {
	return db.inTx(ctx, "ExecInTx", "", func(t *tx) error {
		_, err := t.exec(ctx, q)
		return err
	})
}

// WaitCollected waits for the trees being collected in the background.
func (db *DB) WaitCollected() { db.collecting.Wait() }

// TreeOps counts the rows of tree operations in progress.
func (db *DB) TreeOps(ctx context.Context) (int, error) {
	var n int
	err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM tree_ops`).Scan(&n)
	return n, err
}

// RecoverTreeOps takes over the tree operations whose lease lapsed by now.
func (db *DB) RecoverTreeOps(ctx context.Context, now time.Time) { db.recoverTreeOps(ctx, now) }

// DeleteReturning says whether FinishUpload takes an upload with one
// DELETE … RETURNING; SetDeleteReturning makes it use the two statements
// a server without it needs (MySQL), for tests.
func (db *DB) DeleteReturning() bool      { return db.deleteReturning }
func (db *DB) SetDeleteReturning(on bool) { db.deleteReturning = on }
