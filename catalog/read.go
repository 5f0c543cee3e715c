package catalog

import (
	"context"
	"slices"
	"time"

	"shoal"
)

// entryCols select an entry with its replicas (replica_list, schema
// version 3), so that a Stat is one round trip reading one row of one
// table.
const entryCols = `id, parent_id, path, is_dir, size, mtime_ns, ctime_ns, version,
adler32, md5, sha256, inline, layout, replica_list`

// scanEntries reads rows of entryCols, one Entry per row.
func scanEntries(rows rowSet) ([]*shoal.Entry, error) {
	return scanEntriesExtra(rows, nil)
}

// scanEntriesExtra is scanEntries for rows with one more column after
// entryCols, scanned into extra (the same value for every row).
func scanEntriesExtra(rows rowSet, extra any) ([]*shoal.Entry, error) {
	defer rows.Close()
	var out []*shoal.Entry
	for rows.Next() {
		var (
			e                shoal.Entry
			isDir            bool
			mtime, ctime     int64
			adler            int64
			md5, sha, inline []byte
			layout           string
			replicaList      []byte
		)
		dest := []any{&e.ID, &e.Parent, &e.Path, &isDir, &e.Size, &mtime, &ctime, &e.Version,
			&adler, &md5, &sha, &inline, &layout, &replicaList}
		if extra != nil {
			dest = append(dest, extra)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		e.IsDir = isDir
		e.MTime = time.Unix(0, mtime)
		e.CTime = time.Unix(0, ctime)
		if !isDir {
			e.Sums = shoal.Sums{Adler32: uint32(adler), MD5: nonEmpty(md5), SHA256: nonEmpty(sha)}
			if layout == "" {
				// An inline file: its content is non-nil even when empty.
				if inline == nil {
					inline = []byte{}
				}
				e.Inline = inline
			} else if l, err := shoal.ParseLayout(layout); err == nil {
				e.Layout = l
			}
			reps, err := decodeReplicaList(replicaList)
			if err != nil {
				return nil, shoal.E("catalog", e.Path, err)
			}
			e.Replicas = reps
		}
		out = append(out, &e)
	}
	return out, rows.Err()
}

func nonEmpty(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

// Stat looks up one entry: one query when it exists, a second one only to
// tell NotFound from NotDir when it does not.
func (db *DB) Stat(ctx context.Context, path string) (*shoal.Entry, error) {
	const op = "catalog.Stat"
	db.trips.Add(1)
	ctx, cancel := db.bounded(ctx)
	defer cancel()
	if err := ctx.Err(); err != nil { // the query itself no longer sees it end
		return nil, db.fail(op, path, err)
	}
	rows, err := db.statStmt.QueryContext(db.steadyCtx(ctx), db.key.of(path))
	if err != nil {
		return nil, db.fail(op, path, err)
	}
	var hiding bool
	es, err := scanEntriesExtra(rows, &hiding)
	if err != nil {
		return nil, db.fail(op, path, err)
	}
	if len(es) == 1 && es[0].Path == path {
		if hiding {
			hidden, err := db.hidden(ctx, path)
			if err != nil {
				return nil, db.fail(op, path, err)
			}
			if hidden {
				return nil, shoal.E(op, path, shoal.KindNotFound)
			}
		}
		return es[0], nil
	}
	return nil, db.missing(ctx, op, path)
}

// missing explains why path does not exist: KindNotDir if an ancestor is
// a file, else KindNotFound. One query over all ancestors' hashes.
func (db *DB) missing(ctx context.Context, op, path string) error {
	anc := ancestors(path)
	if len(anc) == 0 {
		return shoal.E(op, path, shoal.KindNotFound)
	}
	rows, err := db.query(ctx, `SELECT path FROM entries e WHERE is_dir = 0 AND `+db.key.in(len(anc)), db.key.args(nil, anc...)...)
	if err != nil {
		return db.fail(op, path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return db.fail(op, path, err)
		}
		if shoal.IsWithin(path, p) {
			return shoal.Errorf(op, shoal.KindNotDir, "%s is a file", p)
		}
	}
	if err := rows.Err(); err != nil {
		return db.fail(op, path, err)
	}
	return shoal.E(op, path, shoal.KindNotFound)
}

// List returns dir's children sorted by name (byte order).
func (db *DB) List(ctx context.Context, dir string) ([]*shoal.Entry, error) {
	const op = "catalog.List"
	d, err := db.Stat(ctx, dir)
	if err != nil {
		return nil, shoal.E(op, dir, err)
	}
	if !d.IsDir {
		return nil, shoal.E(op, dir, shoal.KindNotDir)
	}
	rows, err := db.query(ctx, `SELECT `+entryCols+` FROM entries WHERE parent_id = ? ORDER BY name`, d.ID)
	if err != nil {
		return nil, db.fail(op, dir, err)
	}
	es, err := scanEntries(rows)
	if err != nil {
		return nil, db.fail(op, dir, err)
	}
	return es, nil
}

// sortReplicas orders replicas by shard, as erasure-coded readers expect.
func sortReplicas(rs []shoal.Replica) {
	if len(rs) > 1 {
		slices.SortStableFunc(rs, func(a, b shoal.Replica) int { return a.Shard - b.Shard })
	}
}
