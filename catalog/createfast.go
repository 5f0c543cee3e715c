package catalog

import (
	"context"
	"strings"
	"time"

	"shoal"
)

// createFast inserts a new file at path in one statement where a create
// needs nothing putFile's general way decides: on SQLite (whose one
// writer needs no row locks), outside any tree operation, with no
// reservation to settle and no If-Match. The statement inserts only under
// an existing parent directory with no quota and no tree operation on any
// ancestor, and only if nothing is at path (the unique indexes). ok is
// false when it inserted nothing, and then nothing changed: the caller
// goes the general way, which answers or handles each of those cases.
// Under concurrent creates the catalog's one writer is the limit; this
// is one statement a create instead of two (lockPath's read and the
// INSERT).
func (t *tx) createFast(ctx context.Context, path string, f fileData, md5, sha []byte) (made *shoal.Entry, ok bool, err error) {
	if t.treeOp != 0 || len(f.heldOn) > 0 || len(f.cond.IfMatch) > 0 ||
		t.db.d.lockSuffix(false) != "" || t.db.d.lockSuffix(true) != "" {
		return nil, false, nil
	}
	anc := append([]string{"/"}, ancestors(path)...)
	parent := shoal.ParentPath(path)
	mtime, ctime := f.mtime.UnixNano(), time.Now().UnixNano()
	list := encodeReplicaList(f.replicas)
	args := make([]any, 0, 16+len(anc))
	args = append(args, baseName(path), path, pathHash(path), f.size, mtime, ctime,
		int64(f.sums.Adler32), md5, sha, f.inline, f.layout, list, pathHash(parent), parent)
	for _, a := range anc {
		args = append(args, pathHash(a))
	}
	var q strings.Builder
	q.WriteString(`INSERT INTO entries (parent_id, name, path, path_hash, is_dir, size, mtime_ns, ctime_ns,
		version, adler32, md5, sha256, inline, layout, replica_list)
		SELECT id, ?, ?, ?, 0, ?, ?, ?, 1, ?, ?, ?, ?, ?, ? FROM entries
		WHERE path_hash = ? AND path = ? AND is_dir = 1
		AND NOT EXISTS (SELECT 1 FROM entries WHERE path_hash IN (`)
	q.WriteString(placeholders(len(anc)))
	q.WriteString(`) AND (tree_op <> 0 OR quota <> 0)) RETURNING id, parent_id`)
	rows, err := t.query(ctx, q.String(), args...)
	if err != nil {
		if t.db.isDup(err) {
			return nil, false, nil
		}
		return nil, false, err
	}
	var id, parentID int64
	inserted := rows.Next()
	if inserted {
		err = rows.Scan(&id, &parentID)
	}
	rows.Close()
	if err == nil {
		err = rows.Err()
	}
	switch {
	case t.db.isDup(err):
		return nil, false, nil
	case err != nil:
		return nil, false, err
	case !inserted:
		return nil, false, nil
	}
	if err := t.insertReplicas(ctx, id, f.replicas); err != nil {
		return nil, false, err
	}
	made, err = newFileEntry(id, parentID, path, f, mtime, ctime, md5, sha, list)
	return made, err == nil, err
}
