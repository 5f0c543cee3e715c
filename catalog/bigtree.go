package catalog

import (
	"context"
	"time"

	"shoal"
)

// This file runs the large tree operations of treeops.go: hiding a tree
// to collect, and building a copy (for COPY and MOVE) in chunks.

// hideTree makes n's tree a hidden root of op, to collect: Stat no longer
// finds anything at or below it, no listing shows it.
func (t *tx) hideTree(ctx context.Context, op int64, n *node, grace time.Time) error {
	if err := t.addTreeRoot(ctx, op, roleCollect, n.path, 0, n.id, grace); err != nil {
		return err
	}
	return t.unlink(ctx, op, n.id)
}

// detachTree credits what n's tree holds to the quotas governing it and
// drops the quotas set on n and below it: removeTree's part in quotas, for
// a tree hidden now and collected later.
func (t *tx) detachTree(ctx context.Context, op string, n *node, quotas []int64) error {
	if len(quotas) > 0 {
		bytes, files, err := t.usageOf(ctx, n)
		if err != nil {
			return err
		}
		if err := t.charge(ctx, op, n.path, quotas, -bytes, -files, 0, nil); err != nil {
			return err
		}
	}
	lo, hi := subtreeRange(n.path)
	const marked = `quota = 1 AND (id = ? OR (path >= ? AND path < ?))`
	if _, err := t.exec(ctx, `DELETE FROM quotas WHERE dir_id IN (SELECT id FROM entries WHERE `+marked+`)`, n.id, lo, hi); err != nil {
		return err
	}
	_, err := t.exec(ctx, `UPDATE entries SET quota = 0 WHERE `+marked, n.id, lo, hi)
	return err
}

// holdsQuota reports whether n or a directory below it has a quota.
func (t *tx) holdsQuota(ctx context.Context, n *node) (bool, error) {
	lo, hi := subtreeRange(n.path)
	rows, err := t.query(ctx, `SELECT id FROM entries WHERE quota = 1 AND (id = ? OR (path >= ? AND path < ?)) LIMIT 1`, n.id, lo, hi)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	return rows.Next(), rows.Err()
}

// treeRow is a source entry a chunk copies.
type treeRow struct {
	id, parent int64
	path       string
	isDir      bool
	layout     string
}

// transferTree finishes what prepareTransfer began for a large tree: it
// collects the tree dst replaces, builds the copy of src hidden in
// chunks, and publishes it in one step (for a move, hiding src in the
// same step; src is collected after). On failure the operation is
// abandoned: what was built is collected, and nothing of it was visible.
func (db *DB) transferTree(ctx context.Context, op string, tr transfer, src, dst string, move bool) error {
	id := tr.treeOp
	err := db.collect(ctx, id) // the tree dst replaces, if any
	if err == nil {
		err = db.buildTree(ctx, id, tr.src, src, dst, move)
	}
	if err == nil {
		err = db.treeTx(ctx, id, func(t *tx) error { return t.publishTree(ctx, op, id, tr.src, src, dst, move) })
	}
	if err != nil {
		// The client gets the error; what was built goes, on a context of
		// its own (the client's may be what ended).
		bg := context.WithoutCancel(ctx)
		if aerr := db.inTxAlone(bg, "catalog.treeop", "", func(t *tx) error {
			t.treeOp = id
			return t.abandon(bg, id)
		}); aerr == nil {
			db.collectInBackground(id)
		}
		return shoal.E(op, dst, err)
	}
	if move {
		db.collectInBackground(id)
	}
	return nil
}

// buildTree copies s (at src) to dst, hidden, a chunk per transaction:
// entries in path order (a directory before what it holds), with their
// replica rows and properties.
func (db *DB) buildTree(ctx context.Context, id int64, s *node, src, dst string, move bool) error {
	newIDs := map[int64]int64{} // source directory id -> its copy's
	lo, hi := subtreeRange(src)
	cursor := lo // every path below src is > lo
	top := int64(0)
	for {
		var (
			added    map[int64]int64
			last     string
			newTop   int64
			finished bool
		)
		err := db.treeTx(ctx, id, func(t *tx) error {
			added, last, newTop, finished = map[int64]int64{}, cursor, top, false
			if newTop == 0 {
				var err error
				if newTop, err = t.buildTop(ctx, id, s, dst, move); err != nil {
					return err
				}
				added[s.id] = newTop
			}
			rows, err := t.treeRows(ctx, cursor, hi)
			if err != nil {
				return err
			}
			if len(rows) == 0 {
				finished = true
				return nil
			}
			withProps, err := t.withProps(ctx, rows)
			if err != nil {
				return err
			}
			start := time.Now()
			for _, r := range rows {
				parent, ok := added[r.parent]
				if !ok {
					parent, ok = newIDs[r.parent]
				}
				if !ok {
					return shoal.Errorf("catalog.treeop", shoal.KindOther, "%s: its directory was not copied", r.path)
				}
				np, err := movedPath("catalog.treeop", src, dst, r.path)
				if err != nil {
					return err
				}
				nid, err := t.copyEntry(ctx, r, parent, np, 0, move, withProps[r.id])
				if err != nil {
					return err
				}
				if r.isDir {
					added[r.id] = nid
				}
				last = r.path
				if time.Since(start) > treeChunkTime {
					break
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		for k, v := range added {
			newIDs[k] = v
		}
		cursor, top = last, newTop
		if finished {
			return nil
		}
	}
}

// buildTop copies s, the top of the tree, to dst: unlinked (its parent
// is -op) and marked as op's root, so that it stays hidden and busy.
func (t *tx) buildTop(ctx context.Context, op int64, s *node, dst string, move bool) (int64, error) {
	var n int
	if err := t.queryRow(ctx, `SELECT COUNT(*) FROM tree_ops WHERE op = ? AND role = ?`, op, roleBuild).Scan(&n); err != nil {
		return 0, err
	}
	if n == 0 {
		// dst held a tree, now collected: its collect row went with it.
		var grace int64
		if err := t.queryRow(ctx, `SELECT grace_ns FROM tree_ops WHERE op = ? AND role = ?`, op, roleSource).Scan(&grace); err != nil {
			return 0, err
		}
		if err := t.addTreeRoot(ctx, op, roleBuild, dst, 0, 0, time.Unix(0, grace)); err != nil {
			return 0, err
		}
	}
	props, err := t.withProps(ctx, []treeRow{{id: s.id}})
	if err != nil {
		return 0, err
	}
	// A large tree's top is a directory: no replica rows.
	top, err := t.copyEntry(ctx, treeRow{id: s.id, path: s.path, isDir: true}, -op, dst, op, move, props[s.id])
	if err != nil {
		return 0, err
	}
	_, err = t.exec(ctx, `UPDATE tree_ops SET top_id = ? WHERE op = ? AND role = ?`, top, op, roleBuild)
	return top, err
}

// treeRows reads the next chunk of source entries after cursor, below
// the range's end hi.
func (t *tx) treeRows(ctx context.Context, cursor, hi string) ([]treeRow, error) {
	rows, err := t.query(ctx, `SELECT id, parent_id, path, is_dir, layout FROM entries WHERE path > ? AND path < ? ORDER BY path LIMIT ?`,
		cursor, hi, t.db.opts.TreeChunk)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []treeRow
	for rows.Next() {
		var r treeRow
		if err := rows.Scan(&r.id, &r.parent, &r.path, &r.isDir, &r.layout); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// withProps says which of rows have dead properties.
func (t *tx) withProps(ctx context.Context, rows []treeRow) (map[int64]bool, error) {
	ids := make([]any, len(rows))
	for i, r := range rows {
		ids[i] = r.id
	}
	res, err := t.query(ctx, `SELECT DISTINCT entry_id FROM props WHERE entry_id IN (`+placeholders(len(ids))+`)`, ids...)
	if err != nil {
		return nil, err
	}
	defer res.Close()
	out := map[int64]bool{}
	for res.Next() {
		var id int64
		if err := res.Scan(&id); err != nil {
			return nil, err
		}
		out[id] = true
	}
	return out, res.Err()
}

// copyEntry copies the entry r as np under parent, with its replica rows
// (files stored on data servers: layout not empty) and its properties. A
// copy is a new file (version 1, created now); a move keeps version and
// times. treeOp marks the copy as a root of that operation.
func (t *tx) copyEntry(ctx context.Context, r treeRow, parent int64, np string, treeOp int64, move, props bool) (int64, error) {
	keep := `1, ?`
	args := []any{parent, baseName(np), np, pathHash(np), treeOp}
	if move {
		keep = `version, ctime_ns`
	} else {
		args = append(args, time.Now().UnixNano())
	}
	args = append(args, r.id)
	res, err := t.exec(ctx, `INSERT INTO entries (parent_id, name, path, path_hash, tree_op, is_dir, size, mtime_ns,
		version, ctime_ns, adler32, md5, sha256, inline, layout, replica_list)
		SELECT ?, ?, ?, ?, ?, is_dir, size, mtime_ns, `+keep+`, adler32, md5, sha256, inline, layout, replica_list
		FROM entries WHERE id = ?`, args...)
	if err != nil {
		return 0, err
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, err
	}
	if !r.isDir && r.layout != "" {
		if _, err := t.exec(ctx, `INSERT INTO replicas (entry_id, server, object, shard, size, sum)
			SELECT ?, server, object, shard, size, sum FROM replicas WHERE entry_id = ? ORDER BY id`, id, r.id); err != nil {
			return 0, err
		}
	}
	if props {
		if _, err := t.exec(ctx, `INSERT INTO props (entry_id, space, name, value)
			SELECT ?, space, name, value FROM props WHERE entry_id = ?`, id, r.id); err != nil {
			return 0, err
		}
	}
	return id, nil
}

// publishTree makes op's copy visible at dst in one step: its top joins
// dst's parent. A move hides src in the same step (to be collected); a
// copy releases it.
func (t *tx) publishTree(ctx context.Context, op string, id int64, s *node, src, dst string, move bool) error {
	_, dparent, dstQuotas, err := t.lockPath(ctx, dst)
	if err != nil {
		return err
	}
	if err := checkParent(op, dst, dparent); err != nil {
		return err
	}
	// What arrives is charged to dst's quotas (the source did not change
	// since the copy began: it is busy); what a move takes away leaves
	// src's. A copy's quotas are not copied; a move holds none (see
	// prepareTransfer).
	srcQuotas := []int64(nil)
	if move {
		if _, _, srcQuotas, err = t.lockPath(ctx, src); err != nil {
			return err
		}
	}
	if err := t.moveUsage(ctx, op, s, src, dst, srcQuotas, dstQuotas); err != nil {
		return err
	}
	if _, err := t.exec(ctx, `UPDATE entries SET parent_id = ?, tree_op = 0 WHERE id = (SELECT top_id FROM tree_ops WHERE op = ? AND role = ?)`,
		dparent.id, id, roleBuild); err != nil {
		return err
	}
	if _, err := t.exec(ctx, `DELETE FROM tree_ops WHERE op = ? AND role = ?`, id, roleBuild); err != nil {
		return err
	}
	if move {
		if _, err := t.exec(ctx, `UPDATE tree_ops SET role = ?, hidden = 1 WHERE op = ? AND role = ?`, roleCollect, id, roleSource); err != nil {
			return err
		}
		if err := t.unlink(ctx, id, s.id); err != nil {
			return err
		}
		return t.dropLocks(ctx, src)
	}
	if _, err := t.exec(ctx, `UPDATE entries SET tree_op = 0 WHERE id = ?`, s.id); err != nil {
		return err
	}
	_, err = t.exec(ctx, `DELETE FROM tree_ops WHERE op = ? AND role = ?`, id, roleSource)
	return err
}
