package catalog

import (
	"context"
	"strings"
	"time"

	"shoal"
)

// Garbage returns up to limit items of server due at now, oldest first.
func (db *DB) Garbage(ctx context.Context, server string, now time.Time, limit int) ([]shoal.Garbage, error) {
	const op = "catalog.Garbage"
	if limit <= 0 {
		return nil, nil
	}
	rows, err := db.query(ctx, `SELECT id, server, object, not_before_ns FROM garbage
		WHERE server = ? AND not_before_ns <= ? ORDER BY id LIMIT ?`, server, now.UnixNano(), limit)
	if err != nil {
		return nil, db.fail(op, server, err)
	}
	defer rows.Close()
	var out []shoal.Garbage
	for rows.Next() {
		var g shoal.Garbage
		var nb int64
		if err := rows.Scan(&g.ID, &g.Server, &g.Object, &nb); err != nil {
			return nil, db.fail(op, server, err)
		}
		g.NotBefore = time.Unix(0, nb)
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, db.fail(op, server, err)
	}
	return out, nil
}

// DropGarbage forgets items whose objects are gone; unknown ids are ignored.
func (db *DB) DropGarbage(ctx context.Context, ids []int64) error {
	const op = "catalog.DropGarbage"
	const chunk = 500
	return db.inTx(ctx, op, "", func(t *tx) error {
		for rest := ids; len(rest) > 0; {
			n := min(chunk, len(rest))
			args := make([]any, n)
			for i, id := range rest[:n] {
				args[i] = id
			}
			rest = rest[n:]
			if _, err := t.exec(ctx, `DELETE FROM garbage WHERE id IN (`+placeholders(n)+`)`, args...); err != nil {
				return err
			}
		}
		return nil
	})
}

// NamedObjects implements shoal.ReplicaWalker, by the replicas' (server,
// object) index, in queries of at most namedBatch objects.
func (db *DB) NamedObjects(ctx context.Context, server string, objects []string) ([]string, error) {
	const op = "catalog.NamedObjects"
	const namedBatch = 500
	var named []string
	for len(objects) > 0 {
		n := min(len(objects), namedBatch)
		args := make([]any, 0, n+1)
		args = append(args, server)
		for _, o := range objects[:n] {
			args = append(args, o)
		}
		objects = objects[n:]
		rows, err := db.query(ctx, `SELECT DISTINCT object FROM replicas WHERE server = ? AND object IN (`+placeholders(n)+`)`, args...)
		if err != nil {
			return nil, db.fail(op, server, err)
		}
		for rows.Next() {
			var o string
			if err := rows.Scan(&o); err != nil {
				rows.Close()
				return nil, db.fail(op, server, err)
			}
			named = append(named, o)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, db.fail(op, server, err)
		}
	}
	return named, nil
}

// WalkReplicas calls fn for every replica on server, then for every
// pending upload's object there (with path ""). Rows are read in pages and
// fn runs between queries, so fn may use the catalog.
func (db *DB) WalkReplicas(ctx context.Context, server string, fn func(path string, r shoal.Replica) error) error {
	const op = "catalog.WalkReplicas"
	const page = 1000
	type item struct {
		path string
		r    shoal.Replica
	}
	var after int64
	for {
		// +r.server: a page is a range of the primary key, filtered; by
		// the (server, object) index instead, SQLite sorted every replica
		// of the server for each page (a walk of 100,000 took 93 s).
		rows, err := db.query(ctx, `SELECT r.id, e.path, r.object, r.shard, r.size, r.sum FROM replicas r
			JOIN entries e ON e.id = r.entry_id WHERE +r.server = ? AND r.id > ? ORDER BY r.id LIMIT ?`, server, after, page)
		if err != nil {
			return db.fail(op, server, err)
		}
		var items []item
		for rows.Next() {
			var it item
			var sum int64
			if err := rows.Scan(&after, &it.path, &it.r.Object, &it.r.Shard, &it.r.Size, &sum); err != nil {
				rows.Close()
				return db.fail(op, server, err)
			}
			it.r.Server, it.r.Sum = server, uint32(sum)
			items = append(items, it)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return db.fail(op, server, err)
		}
		for _, it := range items {
			if err := fn(it.path, it.r); err != nil {
				return err
			}
		}
		if len(items) < page {
			break
		}
	}
	rows, err := db.query(ctx, `SELECT servers, object FROM uploads`)
	if err != nil {
		return db.fail(op, server, err)
	}
	var pending []shoal.Replica
	for rows.Next() {
		var servers, object string
		if err := rows.Scan(&servers, &object); err != nil {
			rows.Close()
			return db.fail(op, server, err)
		}
		for i, s := range strings.Split(servers, ",") {
			if s == server {
				pending = append(pending, shoal.Replica{Server: server, Object: object, Shard: i})
			}
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return db.fail(op, server, err)
	}
	for _, r := range pending {
		if err := fn("", r); err != nil {
			return err
		}
	}
	return nil
}

// Usage returns the bytes and number of files at or below path.
func (db *DB) Usage(ctx context.Context, path string) (bytes, files int64, err error) {
	const op = "catalog.Usage"
	e, err := db.Stat(ctx, path)
	if err != nil {
		return 0, 0, shoal.E(op, path, err)
	}
	if !e.IsDir {
		return e.Size, 1, nil
	}
	lo, hi := subtreeRange(path)
	rows, err := db.query(ctx, `SELECT COALESCE(SUM(size), 0), COUNT(*) FROM entries WHERE is_dir = 0 AND path >= ? AND path < ?`, lo, hi)
	if err != nil {
		return 0, 0, db.fail(op, path, err)
	}
	defer rows.Close()
	if rows.Next() {
		if err := rows.Scan(&bytes, &files); err != nil {
			return 0, 0, db.fail(op, path, err)
		}
	}
	return bytes, files, db.fail(op, path, rows.Err())
}
