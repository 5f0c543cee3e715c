package catalog

import (
	"context"
	"strings"
	"time"

	"shoal"
)

// Mkdir creates a directory; a concurrent Mkdir of the same path loses on
// the unique (parent_id, name) key and gets KindExist.
func (db *DB) Mkdir(ctx context.Context, path string, mtime time.Time) (*shoal.Entry, error) {
	const op = "catalog.Mkdir"
	var e *shoal.Entry
	err := db.inTx(ctx, op, path, func(t *tx) error {
		self, parent, quotas, err := t.lockPath(ctx, path)
		if err != nil {
			return err
		}
		if self != nil || path == "/" {
			return shoal.E(op, path, shoal.KindExist)
		}
		if err := checkParent(op, path, parent); err != nil {
			return err
		}
		now := time.Now()
		res, err := t.exec(ctx, `INSERT INTO entries (parent_id, name, path, path_hash, is_dir, mtime_ns, ctime_ns)
			VALUES (?, ?, ?, ?, 1, ?, ?)`, parent.id, baseName(path), path, pathHash(path), mtime.UnixNano(), now.UnixNano())
		if err != nil {
			if db.isDup(err) {
				return shoal.E(op, path, shoal.KindExist, err)
			}
			return err
		}
		id, err := res.LastInsertId()
		if err != nil {
			return err
		}
		if len(quotas) > 0 {
			if err := t.charge(ctx, op, path, quotas, 0, 1, 0, nil); err != nil {
				return err
			}
		}
		e = &shoal.Entry{ID: id, Parent: parent.id, Path: path, IsDir: true, Version: 1,
			MTime: time.Unix(0, mtime.UnixNano()), CTime: time.Unix(0, now.UnixNano())}
		return nil
	})
	return e, err
}

func baseName(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }

// Remove deletes path and its subtree. A tree of more than
// Options.BigTree entries is hidden in one step (its quotas credited)
// and collected after Remove returns (see treeops.go).
func (db *DB) Remove(ctx context.Context, path string, graceUntil time.Time) error {
	const op = "catalog.Remove"
	if path == "/" {
		return shoal.Errorf(op, shoal.KindPermission, "the root cannot be removed")
	}
	var hid int64
	err := db.inTx(ctx, op, path, func(t *tx) error {
		hid = 0
		n, _, quotas, err := t.lockPath(ctx, path)
		if err != nil {
			return err
		}
		if n == nil {
			return shoal.E(op, path, shoal.KindNotFound)
		}
		if n.isDir {
			if err := t.busyBelow(ctx, path); err != nil {
				return err
			}
			big, err := t.big(ctx, n)
			if err != nil {
				return err
			}
			if big {
				hid = newTreeOp()
				if err := t.detachTree(ctx, op, n, quotas); err != nil {
					return err
				}
				if err := t.hideTree(ctx, hid, n, graceUntil); err != nil {
					return err
				}
				return t.dropLocks(ctx, path)
			}
		}
		if err := t.removeTree(ctx, op, n, quotas, graceUntil); err != nil {
			return err
		}
		return t.dropLocks(ctx, path)
	})
	if err == nil && hid != 0 {
		db.collectInBackground(hid)
	}
	return err
}

// transfer is what Move and Copy decided before they act.
type transfer struct {
	src, dparent *node
	created      bool    // dst did not exist
	srcQuotas    []int64 // quotas governing src (its ancestors')
	dstQuotas    []int64 // quotas governing dst
	// treeOp, when not zero: a large tree, moved or copied in chunks
	// (bigtree.go) as that tree operation.
	treeOp int64
}

// prepareTransfer does the checks Move and Copy share. A small tree is
// then ready to move or copy: dst is cleared when overwriting. A large
// one (src or the dst it replaces holding more than Options.BigTree
// entries) gets a tree operation: src is marked busy, dst hidden (and
// its old tree, its quotas credited, to be collected). A move whose
// source holds a quota stays in one transaction (its quotas would have to
// follow the copy's new ids: not done).
func (t *tx) prepareTransfer(ctx context.Context, op, src, dst string, overwrite, move bool, graceUntil time.Time) (tr transfer, err error) {
	s, _, srcQuotas, err := t.lockPath(ctx, src)
	if err != nil {
		return tr, err
	}
	if s == nil {
		return tr, shoal.E(op, src, shoal.KindNotFound)
	}
	if shoal.IsWithin(dst, src) {
		return tr, shoal.Errorf(op, shoal.KindInvalid, "destination %s is %s or inside it", dst, src)
	}
	d, dparent, dstQuotas, err := t.lockPath(ctx, dst)
	if err != nil {
		return tr, err
	}
	if err := checkParent(op, dst, dparent); err != nil {
		return tr, err
	}
	if d != nil {
		if !overwrite {
			return tr, shoal.Errorf(op, shoal.KindPrecondition, "destination %s exists", dst)
		}
		if shoal.IsWithin(src, dst) {
			return tr, shoal.Errorf(op, shoal.KindInvalid, "destination %s contains the source %s", dst, src)
		}
	}
	tr = transfer{src: s, dparent: dparent, created: d == nil, srcQuotas: srcQuotas, dstQuotas: dstQuotas}
	big := false
	for _, n := range []*node{s, d} {
		if n == nil || !n.isDir {
			continue
		}
		if err := t.busyBelow(ctx, n.path); err != nil {
			return tr, err
		}
		b, err := t.big(ctx, n)
		if err != nil {
			return tr, err
		}
		big = big || b
	}
	if big && move {
		q, err := t.holdsQuota(ctx, s)
		if err != nil {
			return tr, err
		}
		big = !q
	}
	if !big {
		if d != nil {
			if err := t.removeTree(ctx, op, d, dstQuotas, graceUntil); err != nil {
				return tr, err
			}
		}
		return tr, nil
	}
	tr.treeOp = newTreeOp()
	if err := t.addTreeRoot(ctx, tr.treeOp, roleSource, src, s.id, s.id, graceUntil); err != nil {
		return tr, err
	}
	if d != nil {
		if err := t.detachTree(ctx, op, d, dstQuotas); err != nil {
			return tr, err
		}
		return tr, t.hideTree(ctx, tr.treeOp, d, graceUntil)
	}
	return tr, t.addTreeRoot(ctx, tr.treeOp, roleBuild, dst, 0, 0, graceUntil)
}

// Move renames src to dst; for a directory it rewrites the path (and path
// hash) of every descendant in the same transaction. What moves leaves
// the quotas that govern src and not dst, and is charged to those that
// govern dst and not src (KindQuota if one cannot hold it); a quota on
// src itself, or below it, moves with it. A large tree (without quotas
// in it) is copied hidden in chunks (keeping versions, sharing objects;
// its entries get new ids, so new ETags), then published while src is
// hidden in one step, and src collected after Move returns (see
// treeops.go).
func (db *DB) Move(ctx context.Context, src, dst string, overwrite bool, graceUntil time.Time) (created bool, err error) {
	const op = "catalog.Move"
	var tr transfer
	err = db.inTx(ctx, op, src, func(t *tx) error {
		var err error
		tr, err = t.prepareTransfer(ctx, op, src, dst, overwrite, true, graceUntil)
		if err != nil || tr.treeOp != 0 {
			return err
		}
		s, dparent := tr.src, tr.dparent
		if err := t.moveUsage(ctx, op, s, src, dst, tr.srcQuotas, tr.dstQuotas); err != nil {
			return err
		}
		if _, err := t.exec(ctx, `UPDATE entries SET parent_id = ?, name = ?, path = ?, path_hash = ? WHERE id = ?`,
			dparent.id, baseName(dst), dst, pathHash(dst), s.id); err != nil {
			return err
		}
		if s.isDir {
			if err := t.rewriteSubtree(ctx, src, dst); err != nil {
				return err
			}
		}
		return t.dropLocks(ctx, src)
	})
	if err == nil && tr.treeOp != 0 {
		err = db.transferTree(ctx, op, tr, src, dst, true)
	}
	return tr.created, err
}

// idsNotIn is a without the ids in b.
// moveUsage moves what n's tree (at src, going to dst) holds from the
// quotas governing src only to those governing dst only.
func (t *tx) moveUsage(ctx context.Context, op string, n *node, src, dst string, srcQuotas, dstQuotas []int64) error {
	leaving, arriving := idsNotIn(srcQuotas, dstQuotas), idsNotIn(dstQuotas, srcQuotas)
	if len(leaving) == 0 && len(arriving) == 0 {
		return nil
	}
	bytes, files, err := t.usageOf(ctx, n)
	if err != nil {
		return err
	}
	if err := t.charge(ctx, op, src, leaving, -bytes, -files, 0, nil); err != nil {
		return err
	}
	return t.charge(ctx, op, dst, arriving, bytes, files, 0, nil)
}

func idsNotIn(a, b []int64) []int64 {
	var out []int64
	for _, id := range a {
		if !containsID(b, id) {
			out = append(out, id)
		}
	}
	return out
}

// movedPath is path, below src, moved or copied below dst: KindURITooLong
// when it would be longer than a path may be (a request naming it would
// get 414: the entry could not be reached).
func movedPath(op, src, dst, path string) (string, error) {
	np := dst + path[len(src):]
	if len(np) > shoal.MaxPathLen {
		return "", shoal.Errorf(op, shoal.KindURITooLong, "%s would become a path of %d bytes under %s, more than %d", path, len(np), dst, shoal.MaxPathLen)
	}
	return np, nil
}

// rewriteSubtree renames every path below src to lie below dst, in
// batched UPDATEs (the hash is computed here: SQLite has no SHA-256).
func (t *tx) rewriteSubtree(ctx context.Context, src, dst string) error {
	lo, hi := subtreeRange(src)
	rows, err := t.query(ctx, `SELECT id, path FROM entries WHERE path >= ? AND path < ?`, lo, hi)
	if err != nil {
		return err
	}
	type idPath struct {
		id   int64
		path string
	}
	var all []idPath
	for rows.Next() {
		var r idPath
		if err := rows.Scan(&r.id, &r.path); err != nil {
			rows.Close()
			return err
		}
		all = append(all, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	const chunk = 200
	for len(all) > 0 {
		n := min(chunk, len(all))
		batch := all[:n]
		all = all[n:]
		var setPath, setHash strings.Builder
		pathArgs := make([]any, 0, 2*n)
		hashArgs := make([]any, 0, 2*n)
		ids := make([]any, 0, n)
		for _, r := range batch {
			np, err := movedPath("catalog.Move", src, dst, r.path)
			if err != nil {
				return err
			}
			setPath.WriteString(" WHEN ? THEN ?")
			setHash.WriteString(" WHEN ? THEN ?")
			pathArgs = append(pathArgs, r.id, np)
			hashArgs = append(hashArgs, r.id, pathHash(np))
			ids = append(ids, r.id)
		}
		args := append(append(pathArgs, hashArgs...), ids...)
		q := `UPDATE entries SET path = CASE id` + setPath.String() + ` END, path_hash = CASE id` + setHash.String() +
			` END WHERE id IN (` + placeholders(n) + `)`
		if _, err := t.exec(ctx, q, args...); err != nil {
			return err
		}
	}
	return nil
}

// Copy duplicates src's tree at dst: new entries sharing src's immutable
// objects (replica rows are copied, data is not) and its dead properties.
// A large tree is built hidden in chunks and published in one step (see
// treeops.go).
func (db *DB) Copy(ctx context.Context, src, dst string, overwrite bool, graceUntil time.Time) (created bool, err error) {
	const op = "catalog.Copy"
	var tr transfer
	err = db.inTx(ctx, op, src, func(t *tx) error {
		var err error
		tr, err = t.prepareTransfer(ctx, op, src, dst, overwrite, false, graceUntil)
		if err != nil || tr.treeOp != 0 {
			return err
		}
		s, dparent := tr.src, tr.dparent
		if len(tr.dstQuotas) > 0 {
			// The copy (quotas are not copied) counts on dst's quotas.
			bytes, files, err := t.usageOf(ctx, s)
			if err != nil {
				return err
			}
			if err := t.charge(ctx, op, dst, tr.dstQuotas, bytes, files, 0, nil); err != nil {
				return err
			}
		}
		type row struct {
			id, parent int64
			path       string
			isDir      bool
		}
		cond, args := "id = ?", []any{s.id}
		if s.isDir {
			lo, hi := subtreeRange(src)
			cond, args = "id = ? OR (path >= ? AND path < ?)", []any{s.id, lo, hi}
		}
		// Byte order puts every directory before its descendants.
		rows, err := t.query(ctx, `SELECT id, parent_id, path, is_dir FROM entries WHERE `+cond+` ORDER BY path`, args...)
		if err != nil {
			return err
		}
		var all []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.id, &r.parent, &r.path, &r.isDir); err != nil {
				rows.Close()
				return err
			}
			all = append(all, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		newID := map[int64]int64{}
		now := time.Now().UnixNano()
		for i, r := range all {
			parent := dparent.id
			if i > 0 {
				parent = newID[r.parent]
			}
			np, err := movedPath("catalog.Copy", src, dst, r.path) // src is never "/": dst would lie inside it
			if err != nil {
				return err
			}
			res, err := t.exec(ctx, `INSERT INTO entries (parent_id, name, path, path_hash, is_dir, size, mtime_ns, ctime_ns,
				version, adler32, md5, sha256, inline, layout, replica_list)
				SELECT ?, ?, ?, ?, is_dir, size, mtime_ns, ?, 1, adler32, md5, sha256, inline, layout, replica_list
				FROM entries WHERE id = ?`,
				parent, baseName(np), np, pathHash(np), now, r.id)
			if err != nil {
				return err
			}
			id, err := res.LastInsertId()
			if err != nil {
				return err
			}
			newID[r.id] = id
			if !r.isDir {
				if _, err := t.exec(ctx, `INSERT INTO replicas (entry_id, server, object, shard, size, sum)
					SELECT ?, server, object, shard, size, sum FROM replicas WHERE entry_id = ? ORDER BY id`, id, r.id); err != nil {
					return err
				}
			}
			if _, err := t.exec(ctx, `INSERT INTO props (entry_id, space, name, value)
				SELECT ?, space, name, value FROM props WHERE entry_id = ?`, id, r.id); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil && tr.treeOp != 0 {
		err = db.transferTree(ctx, op, tr, src, dst, false)
	}
	return tr.created, err
}
