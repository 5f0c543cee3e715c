package catalog

import (
	"context"
	"sort"
	"strconv"

	"shoal"
)

const quotaCols = `e.path, q.bytes_limit, q.files_limit, q.used_bytes, q.used_files, q.reserved`

func scanQuotas(rows rowSet) ([]shoal.Quota, error) {
	defer rows.Close()
	var out []shoal.Quota
	for rows.Next() {
		var q shoal.Quota
		if err := rows.Scan(&q.Dir, &q.Bytes, &q.Files, &q.UsedBytes, &q.UsedFiles, &q.Reserved); err != nil {
			return nil, err
		}
		out = append(out, q)
	}
	return out, rows.Err()
}

// SetQuota puts a quota on dir (or changes its limits) and counts, under
// the exclusive lock on dir that every writer below it waits for, what
// dir holds and what the uploads charged to it reserve: setting a quota
// again is also an exact recount. A limit given as shoal.QuotaKeep is
// read from the locked row, in the same transaction: an md merging
// outside it could race another md's change and write back a stale
// limit.
func (db *DB) SetQuota(ctx context.Context, dir string, bytes, files int64) (shoal.Quota, error) {
	const op = "catalog.SetQuota"
	for _, l := range []int64{bytes, files} {
		if l < 0 && l != shoal.QuotaKeep {
			return shoal.Quota{}, shoal.Errorf(op, shoal.KindInvalid, "a quota limit is a positive number, or 0 to remove it")
		}
	}
	q := shoal.Quota{Dir: dir}
	err := db.inTx(ctx, op, dir, func(t *tx) error {
		n, _, err := t.lockTree(ctx, dir)
		if err != nil {
			return err
		}
		if n == nil {
			return shoal.Errorf(op, shoal.KindNotFound, "no directory %s", dir) // named: the HTTP reason leaves E's path out
		}
		if !n.isDir {
			return shoal.Errorf(op, shoal.KindNotDir, "%s is a file: quotas are set on directories", dir)
		}
		// Lock the row first (if any), so that no reservation lands on it
		// between the count of the uploads and the write below, and no
		// other SetQuota changes the limits kept.
		var oldBytes, oldFiles int64
		err = t.queryRow(ctx, `SELECT bytes_limit, files_limit FROM quotas WHERE dir_id = ?`+t.db.d.lockSuffix(true), n.id).Scan(&oldBytes, &oldFiles)
		exists := err == nil
		if err != nil && !isNoRows(err) {
			return err
		}
		q.Bytes, q.Files = keepLimit(bytes, oldBytes), keepLimit(files, oldFiles)
		if q.Bytes == 0 && q.Files == 0 {
			return shoal.Errorf(op, shoal.KindInvalid, "%s would have neither a byte nor an entry limit: remove its quota instead", dir)
		}
		if q.UsedBytes, q.UsedFiles, err = t.subtreeUsage(ctx, dir); err != nil {
			return err
		}
		if err := t.queryRow(ctx, `SELECT COALESCE(SUM(reserved), 0) FROM uploads WHERE quota_dirs LIKE ?`,
			"%,"+strconv.FormatInt(n.id, 10)+",%").Scan(&q.Reserved); err != nil {
			return err
		}
		if exists {
			_, err = t.exec(ctx, `UPDATE quotas SET bytes_limit = ?, files_limit = ?, used_bytes = ?, used_files = ?, reserved = ? WHERE dir_id = ?`,
				q.Bytes, q.Files, q.UsedBytes, q.UsedFiles, q.Reserved, n.id)
		} else {
			_, err = t.exec(ctx, `INSERT INTO quotas (dir_id, bytes_limit, files_limit, used_bytes, used_files, reserved) VALUES (?, ?, ?, ?, ?, ?)`,
				n.id, q.Bytes, q.Files, q.UsedBytes, q.UsedFiles, q.Reserved)
		}
		if err != nil {
			return err
		}
		if !n.quota {
			_, err = t.exec(ctx, `UPDATE entries SET quota = 1 WHERE id = ?`, n.id)
		}
		return err
	})
	return q, err
}

// keepLimit is the limit SetQuota writes: the one given, or the one set
// (0 when none) for shoal.QuotaKeep.
func keepLimit(given, set int64) int64 {
	if given == shoal.QuotaKeep {
		return set
	}
	return given
}

// RemoveQuota drops dir's quota.
func (db *DB) RemoveQuota(ctx context.Context, dir string) error {
	const op = "catalog.RemoveQuota"
	return db.inTx(ctx, op, dir, func(t *tx) error {
		n, _, err := t.lockTree(ctx, dir)
		if err != nil {
			return err
		}
		if n == nil {
			return shoal.Errorf(op, shoal.KindNotFound, "no directory %s", dir) // named: the HTTP reason leaves E's path out
		}
		if !n.quota {
			return shoal.Errorf(op, shoal.KindNotFound, "%s has no quota", dir)
		}
		if _, err := t.exec(ctx, `DELETE FROM quotas WHERE dir_id = ?`, n.id); err != nil {
			return err
		}
		_, err = t.exec(ctx, `UPDATE entries SET quota = 0 WHERE id = ?`, n.id)
		return err
	})
}

// Quotas lists every quota by directory path.
func (db *DB) Quotas(ctx context.Context) ([]shoal.Quota, error) {
	const op = "catalog.Quotas"
	rows, err := db.query(ctx, `SELECT `+quotaCols+` FROM quotas q JOIN entries e ON e.id = q.dir_id`)
	if err != nil {
		return nil, db.fail(op, "", err)
	}
	qs, err := scanQuotas(rows)
	if err != nil {
		return nil, db.fail(op, "", err)
	}
	sort.Slice(qs, func(i, j int) bool { return qs[i].Dir < qs[j].Dir })
	return qs, nil
}

// QuotasFor returns the quotas on path and its ancestors, nearest first,
// in one query.
func (db *DB) QuotasFor(ctx context.Context, path string) ([]shoal.Quota, error) {
	const op = "catalog.QuotasFor"
	chain := append([]string{"/"}, ancestors(path)...)
	if path != "/" {
		chain = append(chain, path)
	}
	rows, err := db.query(ctx, `SELECT `+quotaCols+` FROM quotas q JOIN entries e ON e.id = q.dir_id
		WHERE `+db.key.in(len(chain)), db.key.args(nil, chain...)...)
	if err != nil {
		return nil, db.fail(op, path, err)
	}
	qs, err := scanQuotas(rows)
	if err != nil {
		return nil, db.fail(op, path, err)
	}
	out := qs[:0]
	for _, q := range qs {
		if shoal.IsWithin(path, q.Dir) { // not a hash collision
			out = append(out, q)
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i].Dir) > len(out[j].Dir) })
	return out, nil
}
