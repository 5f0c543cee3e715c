package catalog

import (
	"context"
	"encoding/json"
	"time"

	"shoal"
)

// Schema version 7: the admin jobs (shoal.JobStore). Times are Unix
// nanoseconds of the caller's clock; a claim is one conditional UPDATE, so
// that of several runners (md processes) exactly one takes a job.
var (
	sqliteJobsV7 = []string{`CREATE TABLE jobs (
			id INTEGER PRIMARY KEY AUTOINCREMENT,
			kind TEXT NOT NULL,
			args BLOB,
			state TEXT NOT NULL,
			progress BLOB,
			result BLOB,
			error TEXT NOT NULL DEFAULT '',
			error_kind INTEGER NOT NULL DEFAULT 0,
			owner TEXT NOT NULL DEFAULT '',
			runs INTEGER NOT NULL DEFAULT 0,
			heartbeat_ns INTEGER NOT NULL DEFAULT 0,
			lease_until_ns INTEGER NOT NULL DEFAULT 0,
			created_ns INTEGER NOT NULL,
			updated_ns INTEGER NOT NULL
		)`,
		`CREATE INDEX jobs_state ON jobs (state, lease_until_ns)`,
	}
	mysqlJobsV7 = []string{`CREATE TABLE jobs (
			id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
			kind VARBINARY(32) NOT NULL,
			args MEDIUMBLOB,
			state VARBINARY(16) NOT NULL,
			progress MEDIUMBLOB,
			result LONGBLOB,
			error BLOB NOT NULL,
			error_kind INT NOT NULL DEFAULT 0,
			owner VARBINARY(255) NOT NULL DEFAULT '',
			runs INT NOT NULL DEFAULT 0,
			heartbeat_ns BIGINT NOT NULL DEFAULT 0,
			lease_until_ns BIGINT NOT NULL DEFAULT 0,
			created_ns BIGINT NOT NULL,
			updated_ns BIGINT NOT NULL,
			KEY jobs_state (state, lease_until_ns)
		) ENGINE=InnoDB ROW_FORMAT=DYNAMIC DEFAULT CHARSET=binary`,
	}
)

const jobColumns = `id, kind, args, state, progress, error, error_kind, owner, runs, heartbeat_ns, lease_until_ns, created_ns, updated_ns`

// claimable is the condition on a job another runner may take at ? (now).
const claimable = `(state = 'queued' OR (state = 'running' AND lease_until_ns < ?))`

// scanner is *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// scanJob reads jobColumns (and result, when withResult, last).
func scanJob(s scanner, withResult bool) (*shoal.Job, error) {
	var j shoal.Job
	var args, progress, result []byte
	var state string
	var kind int
	var hb, lease, created, updated int64
	dest := []any{&j.ID, &j.Kind, &args, &state, &progress, &j.Error, &kind, &j.Owner, &j.Runs, &hb, &lease, &created, &updated}
	if withResult {
		dest = append(dest, &result)
	}
	if err := s.Scan(dest...); err != nil {
		return nil, err
	}
	j.State, j.ErrorKind = shoal.JobState(state), shoal.Kind(kind)
	j.Args, j.Progress = rawJSON(args), rawJSON(progress)
	if withResult {
		j.Result = rawJSON(result)
	}
	j.Heartbeat, j.LeaseUntil = fromNanos(hb), fromNanos(lease)
	j.Created, j.Updated = fromNanos(created), fromNanos(updated)
	return &j, nil
}

func rawJSON(b []byte) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	return json.RawMessage(b)
}

func fromNanos(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

// orNull stores an empty JSON document as NULL.
func orNull(b json.RawMessage) any {
	if len(b) == 0 {
		return nil
	}
	return []byte(b)
}

// CreateJob records a queued job.
func (db *DB) CreateJob(ctx context.Context, j *shoal.Job) (*shoal.Job, error) {
	const op = "catalog.CreateJob"
	if j.Kind == "" || len(j.Kind) > 32 {
		return nil, shoal.Errorf(op, shoal.KindInvalid, "a job needs a kind of 1 to 32 bytes")
	}
	if len(j.Args) > 0 && !json.Valid(j.Args) {
		return nil, shoal.Errorf(op, shoal.KindInvalid, "job arguments are not JSON")
	}
	now := time.Now().UnixNano()
	var out *shoal.Job
	err := db.inTx(ctx, op, "", func(t *tx) error {
		res, err := t.exec(ctx, `INSERT INTO jobs (kind, args, state, error, created_ns, updated_ns) VALUES (?,?,?,'',?,?)`,
			j.Kind, orNull(j.Args), string(shoal.JobQueued), now, now)
		if err != nil {
			return err
		}
		id, err := res.LastInsertId()
		if err != nil {
			return err
		}
		out, err = t.job(ctx, id)
		return err
	})
	return out, err
}

// job reads one job (with its result) inside a transaction.
func (t *tx) job(ctx context.Context, id int64) (*shoal.Job, error) {
	j, err := scanJob(t.queryRow(ctx, `SELECT `+jobColumns+`, result FROM jobs WHERE id = ?`, id), true)
	if isNoRows(err) {
		return nil, shoal.Errorf("catalog.Job", shoal.KindNotFound, "no job %d", id)
	}
	return j, err
}

// Jobs lists the newest jobs first, without their results.
func (db *DB) Jobs(ctx context.Context, limit int) ([]shoal.Job, error) {
	const op = "catalog.Jobs"
	if limit <= 0 {
		limit = 100
	}
	rows, err := db.query(ctx, `SELECT `+jobColumns+` FROM jobs ORDER BY id DESC LIMIT ?`, limit)
	if err != nil {
		return nil, db.fail(op, "", err)
	}
	defer rows.Close()
	out := []shoal.Job{}
	for rows.Next() {
		j, err := scanJob(rows, false)
		if err != nil {
			return nil, db.fail(op, "", err)
		}
		out = append(out, *j)
	}
	if err := rows.Err(); err != nil {
		return nil, db.fail(op, "", err)
	}
	return out, nil
}

// Job returns one job with its result.
func (db *DB) Job(ctx context.Context, id int64) (*shoal.Job, error) {
	const op = "catalog.Job"
	rows, err := db.query(ctx, `SELECT `+jobColumns+`, result FROM jobs WHERE id = ?`, id)
	if err != nil {
		return nil, db.fail(op, "", err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, db.fail(op, "", err)
		}
		return nil, shoal.Errorf(op, shoal.KindNotFound, "no job %d", id)
	}
	j, err := scanJob(rows, true)
	if err != nil {
		return nil, db.fail(op, "", err)
	}
	return j, nil
}

// ClaimJob takes the oldest claimable job. The UPDATE re-checks the
// condition the SELECT found true, so of several runners that read the
// same job one changes it and the others, changing nothing, try again:
// each loss means a job was taken, so this ends.
func (db *DB) ClaimJob(ctx context.Context, owner string, now time.Time, lease time.Duration) (*shoal.Job, error) {
	const op = "catalog.ClaimJob"
	if owner == "" {
		return nil, shoal.Errorf(op, shoal.KindInvalid, "a claim needs an owner")
	}
	ns := now.UnixNano()
	// Idle runners ask every second or so: a read on the read pool, so
	// that asking does not take the writer (SQLite's one connection).
	rows, err := db.query(ctx, `SELECT id FROM jobs WHERE `+claimable+` LIMIT 1`, ns)
	if err != nil {
		return nil, db.fail(op, "", err)
	}
	some := rows.Next()
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, db.fail(op, "", err)
	}
	if !some {
		return nil, shoal.Errorf(op, shoal.KindNotFound, "no job to run")
	}
	for {
		var out *shoal.Job
		lost := false
		err := db.inTx(ctx, op, "", func(t *tx) error {
			// Afresh at every run: a batch that runs fn again (see
			// committer.runShared) after a run that lost must not leave
			// lost set, or the job this run claims would go unreported.
			out, lost = nil, false
			var id int64
			err := t.queryRow(ctx, `SELECT id FROM jobs WHERE `+claimable+` ORDER BY id LIMIT 1`, ns).Scan(&id)
			if isNoRows(err) {
				return shoal.Errorf(op, shoal.KindNotFound, "no job to run")
			}
			if err != nil {
				return err
			}
			res, err := t.exec(ctx, `UPDATE jobs SET state = 'running', owner = ?, runs = runs + 1, heartbeat_ns = ?,
				lease_until_ns = ?, updated_ns = ? WHERE id = ? AND `+claimable,
				owner, ns, now.Add(lease).UnixNano(), ns, id, ns)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil || n != 1 {
				lost = true
				return shoal.Errorf(op, shoal.KindConflict, "job %d taken by another runner", id)
			}
			out, err = t.job(ctx, id)
			return err
		})
		if !lost || ctx.Err() != nil {
			return out, err
		}
	}
}

// HeartbeatJob renews owner's lease and records progress.
func (db *DB) HeartbeatJob(ctx context.Context, id int64, owner string, progress json.RawMessage, now time.Time, lease time.Duration) error {
	const op = "catalog.HeartbeatJob"
	ns := now.UnixNano()
	return db.inTx(ctx, op, "", func(t *tx) error {
		res, err := t.exec(ctx, `UPDATE jobs SET progress = ?, heartbeat_ns = ?, lease_until_ns = ?, updated_ns = ?
			WHERE id = ? AND owner = ? AND state = 'running' AND lease_until_ns >= ?`,
			orNull(progress), ns, now.Add(lease).UnixNano(), ns, id, owner, ns)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return t.notHeld(ctx, op, id, owner, now)
		}
		return nil
	})
}

// notHeld says why owner does not hold job id at now.
func (t *tx) notHeld(ctx context.Context, op string, id int64, owner string, now time.Time) error {
	j, err := t.job(ctx, id)
	if err != nil {
		return err
	}
	switch {
	case j.Owner != owner:
		return shoal.Errorf(op, shoal.KindConflict, "job %d is not held by %s (owner %q, %s)", id, owner, j.Owner, j.State)
	case j.State != shoal.JobRunning:
		return shoal.Errorf(op, shoal.KindConflict, "job %d is %s", id, j.State)
	case j.LeaseUntil.Before(now):
		return shoal.Errorf(op, shoal.KindConflict, "job %d: the lease of %s lapsed at %s", id, owner, j.LeaseUntil.Format(time.RFC3339Nano))
	}
	return shoal.Errorf(op, shoal.KindConflict, "job %d changed meanwhile", id)
}

// FinishJob records the end of a job its owner ran.
func (db *DB) FinishJob(ctx context.Context, j *shoal.Job, now time.Time) error {
	const op = "catalog.FinishJob"
	if !j.State.Finished() {
		return shoal.Errorf(op, shoal.KindInvalid, "job %d cannot finish as %q", j.ID, j.State)
	}
	ns := now.UnixNano()
	return db.inTx(ctx, op, "", func(t *tx) error {
		res, err := t.exec(ctx, `UPDATE jobs SET state = CASE WHEN state = 'cancelled' THEN 'cancelled' ELSE ? END,
			progress = ?, result = ?, error = ?, error_kind = ?, updated_ns = ?
			WHERE id = ? AND owner = ? AND state IN ('running', 'cancelled')`,
			string(j.State), orNull(j.Progress), orNull(j.Result), j.Error, int(j.ErrorKind), ns, j.ID, j.Owner)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			cur, err := t.job(ctx, j.ID)
			if err != nil {
				return err
			}
			return shoal.Errorf(op, shoal.KindConflict, "job %d is %s, owner %q: not %s's to finish", j.ID, cur.State, cur.Owner, j.Owner)
		}
		return nil
	})
}

// ForgetJobs deletes the jobs that ended before before.
func (db *DB) ForgetJobs(ctx context.Context, before time.Time) (int64, error) {
	const op = "catalog.ForgetJobs"
	var n int64
	ns := before.UnixNano()
	err := db.inTx(ctx, op, "", func(t *tx) error {
		res, err := t.exec(ctx, `DELETE FROM jobs WHERE updated_ns < ? AND (state IN ('done', 'failed') OR state = 'cancelled' AND lease_until_ns < ?)`, ns, ns)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}

// CancelJob cancels a queued or running job. The UPDATE's condition, not
// a read before it, decides: a job finishing at that moment stays done.
func (db *DB) CancelJob(ctx context.Context, id int64, now time.Time) (*shoal.Job, error) {
	const op = "catalog.CancelJob"
	var out *shoal.Job
	err := db.inTx(ctx, op, "", func(t *tx) error {
		if _, err := t.exec(ctx, `UPDATE jobs SET state = 'cancelled', updated_ns = ? WHERE id = ? AND state IN ('queued', 'running')`,
			now.UnixNano(), id); err != nil {
			return err
		}
		j, err := t.job(ctx, id)
		if err != nil {
			return err
		}
		if j.State != shoal.JobCancelled {
			return shoal.Errorf(op, shoal.KindConflict, "job %d is already %s", id, j.State)
		}
		out = j
		return nil
	})
	return out, err
}
