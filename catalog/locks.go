package catalog

import (
	"context"
	"time"

	"shoal"
)

const lockColumns = `token, root, infinity, exclusive, owner, principal, timeout_ns, expires_ns`

func scanLock(rows interface{ Scan(...any) error }) (shoal.Lock, error) {
	var l shoal.Lock
	var timeout, expires int64
	err := rows.Scan(&l.Token, &l.Root, &l.Infinity, &l.Exclusive, &l.Owner, &l.Principal, &timeout, &expires)
	l.Timeout, l.Expires = time.Duration(timeout), time.Unix(0, expires)
	return l, err
}

// lockQuery selects the live locks that may apply to path: rooted at path
// or an ancestor (the caller keeps those that cover it), and with below
// those rooted strictly under it.
func lockQuery(path string, below bool, now time.Time) (string, []any) {
	hashes := lockChain(path, now)
	q := `SELECT ` + lockColumns + ` FROM locks WHERE expires_ns > ? AND (root_hash IN (` + placeholders(len(hashes)-1) + `)`
	if below {
		lo, hi := subtreeRange(path)
		q += ` OR (root >= ? AND root < ?)`
		hashes = append(hashes, lo, hi)
	}
	return q + `)`, hashes
}

// lockCountQuery counts the live locks rooted at path or an ancestor.
func lockCountQuery(path string, now time.Time) (string, []any) {
	hashes := lockChain(path, now)
	return `SELECT COUNT(*) FROM locks WHERE expires_ns > ? AND root_hash IN (` + placeholders(len(hashes)-1) + `)`, hashes
}

// lockChain is the arguments of a query of the live locks rooted at path
// or an ancestor: now, then the roots' hashes.
func lockChain(path string, now time.Time) []any {
	hashes := []any{now.UnixNano(), pathHash(path)}
	if path != "/" {
		hashes = append(hashes, pathHash("/"))
		for _, a := range ancestors(path) {
			hashes = append(hashes, pathHash(a))
		}
	}
	return hashes
}

func collectLocks(rows rowSet, path string, below bool) ([]shoal.Lock, error) {
	defer rows.Close()
	var out []shoal.Lock
	for rows.Next() {
		l, err := scanLock(rows)
		if err != nil {
			return nil, err
		}
		if l.Covers(path) || below && shoal.IsWithin(l.Root, path) || l.Root == path {
			out = append(out, l)
		}
	}
	return out, rows.Err()
}

// Locks returns the live locks covering path (and below it, with below).
func (db *DB) Locks(ctx context.Context, path string, below bool, now time.Time) ([]shoal.Lock, error) {
	const op = "catalog.Locks"
	q, args := lockQuery(path, below, now)
	rows, err := db.query(ctx, q, args...)
	if err != nil {
		return nil, db.fail(op, path, err)
	}
	ls, err := collectLocks(rows, path, below)
	if err != nil {
		return nil, db.fail(op, path, err)
	}
	return ls, nil
}

// CreateLock records l unless it conflicts or a limit is reached.
func (db *DB) CreateLock(ctx context.Context, l *shoal.Lock, lim shoal.LockLimits, now time.Time) error {
	const op = "catalog.CreateLock"
	return db.inTx(ctx, op, l.Root, func(t *tx) error {
		if _, err := t.exec(ctx, `UPDATE lock_guard SET n = n + 1 WHERE id = 1`); err != nil {
			return err
		}
		q, args := lockQuery(l.Root, l.Infinity, now)
		rows, err := t.query(ctx, q, args...)
		if err != nil {
			return err
		}
		others, err := collectLocks(rows, l.Root, l.Infinity)
		if err != nil {
			return err
		}
		for _, o := range others {
			if (o.Covers(l.Root) || l.Covers(o.Root)) && (o.Exclusive || l.Exclusive) {
				return shoal.Errorf(op, shoal.KindLocked, "%s is locked", o.Root)
			}
		}
		if lim.PerPrincipal > 0 {
			var n int
			if err := t.queryRow(ctx, `SELECT COUNT(*) FROM locks WHERE principal = ? AND expires_ns > ?`, l.Principal, now.UnixNano()).Scan(&n); err != nil {
				return err
			}
			if n >= lim.PerPrincipal {
				return shoal.Errorf(op, shoal.KindUnavailable, "%s holds %d locks already, the most one principal may hold", l.Principal, n)
			}
		}
		if lim.Total > 0 {
			var n int
			if err := t.queryRow(ctx, `SELECT COUNT(*) FROM locks WHERE expires_ns > ?`, now.UnixNano()).Scan(&n); err != nil {
				return err
			}
			if n >= lim.Total {
				return shoal.Errorf(op, shoal.KindUnavailable, "%d locks are held, the most this namespace allows", n)
			}
		}
		_, err = t.exec(ctx, `INSERT INTO locks (`+lockColumns+`, root_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			l.Token, l.Root, l.Infinity, l.Exclusive, l.Owner, l.Principal, int64(l.Timeout), l.Expires.UnixNano(), pathHash(l.Root))
		if db.isDup(err) {
			return shoal.Errorf(op, shoal.KindExist, "lock token exists")
		}
		return err
	})
}

// ownLock reads the live lock token inside t and checks it covers path
// and is principal's; missing is the kind to answer when it is not there.
func (t *tx) ownLock(ctx context.Context, op, token, path, principal string, now time.Time, missing shoal.Kind) (*shoal.Lock, error) {
	l, err := scanLock(t.queryRow(ctx, `SELECT `+lockColumns+` FROM locks WHERE token = ?`+t.db.d.lockSuffix(true), token))
	switch {
	case isNoRows(err) || err == nil && (!l.Expires.After(now) || !l.Covers(path)):
		return nil, shoal.Errorf(op, missing, "no lock %s on %s", token, path)
	case err != nil:
		return nil, err
	case l.Principal != principal:
		return nil, shoal.Errorf(op, shoal.KindPermission, "the lock belongs to another principal")
	}
	return &l, nil
}

// RefreshLock gives a live lock a new timeout.
func (db *DB) RefreshLock(ctx context.Context, token, path, principal string, timeout time.Duration, now time.Time) (*shoal.Lock, error) {
	const op = "catalog.RefreshLock"
	var out *shoal.Lock
	err := db.inTx(ctx, op, path, func(t *tx) error {
		l, err := t.ownLock(ctx, op, token, path, principal, now, shoal.KindPrecondition)
		if err != nil {
			return err
		}
		l.Timeout, l.Expires = timeout, now.Add(timeout)
		if _, err := t.exec(ctx, `UPDATE locks SET timeout_ns = ?, expires_ns = ? WHERE token = ?`, int64(timeout), l.Expires.UnixNano(), token); err != nil {
			return err
		}
		out = l
		return nil
	})
	return out, err
}

// Unlock removes a live lock of principal's.
func (db *DB) Unlock(ctx context.Context, token, path, principal string, now time.Time) error {
	const op = "catalog.Unlock"
	return db.inTx(ctx, op, path, func(t *tx) error {
		if _, err := t.ownLock(ctx, op, token, path, principal, now, shoal.KindConflict); err != nil {
			return err
		}
		_, err := t.exec(ctx, `DELETE FROM locks WHERE token = ?`, token)
		return err
	})
}

// dropLocks removes the locks rooted at path or below, in the
// transaction of a Remove or Move: locks do not follow a resource (RFC
// 4918 §7.5), and a new resource at that path starts unlocked.
func (t *tx) dropLocks(ctx context.Context, path string) error {
	lo, hi := subtreeRange(path)
	_, err := t.exec(ctx, `DELETE FROM locks WHERE root_hash = ? OR (root >= ? AND root < ?)`, pathHash(path), lo, hi)
	return err
}

// ExpireLocks deletes the locks expired before now.
func (db *DB) ExpireLocks(ctx context.Context, now time.Time) (int, error) {
	const op = "catalog.ExpireLocks"
	var n int64
	err := db.inTx(ctx, op, "", func(t *tx) error {
		res, err := t.exec(ctx, `DELETE FROM locks WHERE expires_ns < ?`, now.UnixNano())
		if err == nil {
			n, err = res.RowsAffected()
		}
		return err
	})
	return int(n), err
}

// CountLocks counts the live locks.
func (db *DB) CountLocks(ctx context.Context, now time.Time) (int, error) {
	const op = "catalog.CountLocks"
	rows, err := db.query(ctx, `SELECT COUNT(*) FROM locks WHERE expires_ns > ?`, now.UnixNano())
	if err != nil {
		return 0, db.fail(op, "", err)
	}
	defer rows.Close()
	var n int
	if rows.Next() {
		err = rows.Scan(&n)
	}
	if err == nil {
		err = rows.Err()
	}
	if err != nil {
		return 0, db.fail(op, "", err)
	}
	return n, nil
}

// lockedAgainst refuses (KindLocked) the commit of an upload to path that
// client reserved when a live lock of another principal covers path: one
// taken after the reservation, which md checked the locks for. A shared
// lock passes when client holds one on the same root, as at md. An
// anonymous client is named by its address ("ip:…"); its locks are
// anonymous's. No client (a reservation made inside shoal): no check.
func (t *tx) lockedAgainst(ctx context.Context, op, path, client string, now time.Time) error {
	if client == "" {
		return nil
	}
	who := shoal.PrincipalOfClient(client)
	q, args := lockQuery(path, false, now)
	rows, err := t.query(ctx, q, args...)
	if err != nil {
		return err
	}
	locks, err := collectLocks(rows, path, false)
	if err != nil {
		return err
	}
	if l := shoal.Blocking(locks, func(l *shoal.Lock) bool { return l.Principal == who }); l != nil {
		return shoal.Errorf(op, shoal.KindLocked, "%s was locked by another principal after this upload began", l.Root)
	}
	return nil
}
