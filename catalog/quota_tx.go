package catalog

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"shoal"
)

// The quota counters move in the transaction of the write that changes
// what they count, with conditional UPDATEs: a write that would take a
// quota over its limit matches fewer rows than it names, and its
// transaction is rolled back with KindQuota. Writers below one quota
// queue on its row only for the end of their transactions (the UPDATE
// comes last), and take no other lock on it, so they cannot deadlock on
// it.

// charge adds bytes and files to the counters of the quotas on ids (their
// directories' entry ids). An increase that a quota with a limit cannot
// hold is refused (KindQuota); a decrease never is. held is the
// reservation of an upload being committed, made on the quotas heldOn:
// it is given back, and on the quotas in both lists it covers the
// increase (up to held), so a commit whose reservation was granted
// succeeds even if the limit was lowered since.
func (t *tx) charge(ctx context.Context, op, path string, ids []int64, bytes, files, held int64, heldOn []int64) error {
	var both, onlyNew []int64
	for _, id := range ids {
		if containsID(heldOn, id) {
			both = append(both, id)
		} else {
			onlyNew = append(onlyNew, id)
		}
	}
	var onlyHeld []int64
	for _, id := range heldOn {
		if !containsID(ids, id) {
			onlyHeld = append(onlyHeld, id)
		}
	}
	if held > 0 && len(onlyHeld) > 0 {
		// The quotas that no longer govern path (removed, or path's
		// directory moved out of them) only get their reservation back.
		args := append([]any{held}, idArgs(onlyHeld)...)
		if _, err := t.exec(ctx, `UPDATE quotas SET reserved = reserved - ? WHERE dir_id IN (`+placeholders(len(onlyHeld))+`)`, args...); err != nil {
			return err
		}
	}
	if len(both) > 0 {
		if err := t.chargeSome(ctx, op, path, both, bytes, files, held); err != nil {
			return err
		}
	}
	if len(onlyNew) > 0 && (bytes != 0 || files != 0) {
		return t.chargeSome(ctx, op, path, onlyNew, bytes, files, 0)
	}
	return nil
}

// chargeSome is one conditional UPDATE of charge.
func (t *tx) chargeSome(ctx context.Context, op, path string, ids []int64, bytes, files, held int64) error {
	if held == 0 && bytes == 0 && files == 0 {
		return nil
	}
	args := []any{held, bytes, files, bytes, held, held, bytes, files, files}
	args = append(args, idArgs(ids)...)
	res, err := t.exec(ctx, `UPDATE quotas SET reserved = reserved - ?, used_bytes = used_bytes + ?, used_files = used_files + ?
		WHERE (? <= ? OR bytes_limit = 0 OR used_bytes + reserved - ? + ? <= bytes_limit)
		AND (? <= 0 OR files_limit = 0 OR used_files + ? <= files_limit)
		AND dir_id IN (`+placeholders(len(ids))+`)`, args...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if int(n) < len(ids) {
		return t.quotaRefusal(ctx, op, path, ids, bytes, files, held)
	}
	return nil
}

// reserve charges an upload's reservation to the quotas on ids, refusing
// (KindQuota) when one cannot hold it, or cannot take one more entry
// when newEntry.
func (t *tx) reserve(ctx context.Context, op, path string, ids []int64, bytes int64, newEntry bool) error {
	files := int64(0)
	if newEntry {
		files = 1
	}
	args := []any{bytes, bytes, files, files}
	args = append(args, idArgs(ids)...)
	res, err := t.exec(ctx, `UPDATE quotas SET reserved = reserved + ?
		WHERE (bytes_limit = 0 OR used_bytes + reserved + ? <= bytes_limit)
		AND (? <= 0 OR files_limit = 0 OR used_files + ? <= files_limit)
		AND dir_id IN (`+placeholders(len(ids))+`)`, args...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if int(n) < len(ids) {
		return t.quotaRefusal(ctx, op, path, ids, bytes, files, 0)
	}
	return nil
}

// quotaRefusal says which quota refused a change: KindQuota naming it
// and its numbers. If none does (a quota vanished between the lookup and
// the UPDATE) the transaction is run again (errRace).
func (t *tx) quotaRefusal(ctx context.Context, op, path string, ids []int64, bytes, files, held int64) error {
	qs, err := t.quotasByID(ctx, ids)
	if err != nil {
		return err
	}
	for _, q := range qs {
		if bytes > held && q.Bytes > 0 && q.UsedBytes+q.Reserved-held+bytes > q.Bytes {
			return shoal.E(op, path, shoal.KindQuota, fmt.Errorf("the quota on %s has no room for %d more bytes: %d used and %d reserved of %d",
				q.Dir, bytes-held, q.UsedBytes, q.Reserved-held, q.Bytes))
		}
		if files > 0 && q.Files > 0 && q.UsedFiles+files > q.Files {
			return shoal.E(op, path, shoal.KindQuota, fmt.Errorf("the quota on %s has no room for %d more entries: %d of %d used",
				q.Dir, files, q.UsedFiles, q.Files))
		}
	}
	return errRace
}

// quotasByID reads the quotas of the directories ids, with their paths.
func (t *tx) quotasByID(ctx context.Context, ids []int64) ([]shoal.Quota, error) {
	rows, err := t.query(ctx, `SELECT `+quotaCols+` FROM quotas q JOIN entries e ON e.id = q.dir_id
		WHERE q.dir_id IN (`+placeholders(len(ids))+`)`, idArgs(ids)...)
	if err != nil {
		return nil, err
	}
	return scanQuotas(rows)
}

// usageOf is what n holds, itself included: its size and 1 for a file;
// for a directory the sizes of the files below it and the number of
// entries below it, plus itself.
func (t *tx) usageOf(ctx context.Context, n *node) (bytes, files int64, err error) {
	if !n.isDir {
		return n.size, 1, nil
	}
	bytes, files, err = t.subtreeUsage(ctx, n.path)
	return bytes, files + 1, err
}

// subtreeUsage is the sizes and the number of the entries strictly below
// dir.
func (t *tx) subtreeUsage(ctx context.Context, dir string) (bytes, files int64, err error) {
	lo, hi := subtreeRange(dir)
	err = t.queryRow(ctx, `SELECT COALESCE(SUM(size), 0), COUNT(*) FROM entries WHERE path >= ? AND path < ?`, lo, hi).Scan(&bytes, &files)
	if dir == "/" && files > 0 {
		files-- // the root's range holds "/" itself
	}
	return bytes, files, err
}

func containsID(ids []int64, id int64) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

func idArgs(ids []int64) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}

// encodeQuotaDirs writes the quota directories an upload charged as
// ",ID,ID," (so that one is found with LIKE '%,ID,%'); "" for none.
func encodeQuotaDirs(ids []int64) string {
	if len(ids) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteByte(',')
	for _, id := range ids {
		b.WriteString(strconv.FormatInt(id, 10))
		b.WriteByte(',')
	}
	return b.String()
}

// decodeQuotaDirs reads encodeQuotaDirs; malformed parts are skipped.
func decodeQuotaDirs(s string) []int64 {
	var out []int64
	for _, p := range strings.Split(s, ",") {
		if id, err := strconv.ParseInt(p, 10, 64); err == nil {
			out = append(out, id)
		}
	}
	return out
}
