package catalog

import (
	"context"
	"sort"
	"time"

	"shoal"
)

// Schema version 2: directories mapped to pools (the pools table itself
// is in version 1). A mapping is keyed by the directory's entry id, so it
// follows the directory through a MOVE; a removed directory's row is
// never matched again (ids are not reused).
var (
	sqlitePoolsV2 = []string{`CREATE TABLE dir_pools (
			dir_id INTEGER PRIMARY KEY,
			pool TEXT NOT NULL
		)`}
	mysqlPoolsV2 = []string{`CREATE TABLE dir_pools (
			dir_id BIGINT NOT NULL PRIMARY KEY,
			pool VARBINARY(255) NOT NULL
		) ENGINE=InnoDB ROW_FORMAT=DYNAMIC DEFAULT CHARSET=binary`}
)

// PutPool creates or updates a pool.
func (db *DB) PutPool(ctx context.Context, p shoal.Pool) error {
	const op = "catalog.PutPool"
	if err := shoal.CheckPoolName(p.Name); err != nil {
		return shoal.E(op, err) // here, not only in md and the CLI: every writer of pools goes through it
	}
	if p.Layout.IsZero() {
		return shoal.Errorf(op, shoal.KindInvalid, "pool %s has no layout", p.Name)
	}
	if _, err := shoal.ParseLayout(p.Layout.String()); err != nil {
		return err
	}
	return db.inTx(ctx, op, p.Name, func(t *tx) error {
		res, err := t.exec(ctx, `UPDATE pools SET layout = ? WHERE name = ?`, p.Layout.String(), p.Name)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err == nil && n > 0 {
			return nil
		}
		var n int
		if err := t.queryRow(ctx, `SELECT COUNT(*) FROM pools WHERE name = ?`, p.Name).Scan(&n); err != nil {
			return err
		}
		if n > 0 { // same layout as before (MySQL counts changed rows only)
			return nil
		}
		_, err = t.exec(ctx, `INSERT INTO pools (name, layout) VALUES (?, ?)`, p.Name, p.Layout.String())
		if db.isDup(err) {
			return errRace
		}
		return err
	})
}

// Pools lists every pool by name; DefaultPool is there even if never put.
func (db *DB) Pools(ctx context.Context) ([]shoal.Pool, error) {
	const op = "catalog.Pools"
	rows, err := db.query(ctx, `SELECT name, layout FROM pools`)
	if err != nil {
		return nil, db.fail(op, "", err)
	}
	defer rows.Close()
	var out []shoal.Pool
	seenDefault := false
	for rows.Next() {
		var name, layout string
		if err := rows.Scan(&name, &layout); err != nil {
			return nil, db.fail(op, "", err)
		}
		l, err := shoal.ParseLayout(layout)
		if err != nil {
			return nil, shoal.E(op, name, shoal.KindCorrupt, err)
		}
		seenDefault = seenDefault || name == shoal.DefaultPool
		out = append(out, shoal.Pool{Name: name, Layout: l})
	}
	if err := rows.Err(); err != nil {
		return nil, db.fail(op, "", err)
	}
	if !seenDefault {
		out = append(out, shoal.Pool{Name: shoal.DefaultPool, Layout: shoal.DefaultLayout})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// pool reads one pool inside a transaction; DefaultPool always exists.
func (t *tx) pool(ctx context.Context, name string) (shoal.Pool, bool, error) {
	var layout string
	err := t.queryRow(ctx, `SELECT layout FROM pools WHERE name = ?`, name).Scan(&layout)
	if isNoRows(err) {
		if name == shoal.DefaultPool {
			return shoal.Pool{Name: name, Layout: shoal.DefaultLayout}, true, nil
		}
		return shoal.Pool{}, false, nil
	}
	if err != nil {
		return shoal.Pool{}, false, err
	}
	l, err := shoal.ParseLayout(layout)
	if err != nil {
		return shoal.Pool{}, false, shoal.E("catalog.pool", name, shoal.KindCorrupt, err)
	}
	return shoal.Pool{Name: name, Layout: l}, true, nil
}

// SetDirPool maps dir to pool.
func (db *DB) SetDirPool(ctx context.Context, dir, pool string) error {
	const op = "catalog.SetDirPool"
	return db.inTx(ctx, op, dir, func(t *tx) error {
		self, _, err := t.lockTree(ctx, dir)
		if err != nil {
			return err
		}
		if self == nil {
			return shoal.Errorf(op, shoal.KindNotFound, "no directory %s", dir) // named: the HTTP reason leaves E's path out
		}
		if !self.isDir {
			return shoal.Errorf(op, shoal.KindNotDir, "%s is a file", dir)
		}
		if _, ok, err := t.pool(ctx, pool); err != nil {
			return err
		} else if !ok {
			return shoal.Errorf(op, shoal.KindNotFound, "no pool %q (add it first)", pool)
		}
		if _, err := t.exec(ctx, `DELETE FROM dir_pools WHERE dir_id = ?`, self.id); err != nil {
			return err
		}
		_, err = t.exec(ctx, `INSERT INTO dir_pools (dir_id, pool) VALUES (?, ?)`, self.id, pool)
		return err
	})
}

// PoolMappings counts the directories mapped to a pool (cache's SoleMD
// tier learns from it that every file goes to the default pool).
func (db *DB) PoolMappings(ctx context.Context) (int, error) {
	var n int
	ctx, cancel := db.bounded(ctx)
	defer cancel()
	db.trips.Add(1)
	if err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM dir_pools`).Scan(&n); err != nil {
		return 0, db.fail("catalog.PoolMappings", "", err)
	}
	return n, nil
}

// PoolFor finds the nearest mapped directory at or above path, and its
// pool, in one query: the mapped ancestors with their pools' layouts, and
// the default pool's row (present once an operator set its layout), which
// is the answer when no ancestor is mapped. Every upload asks.
func (db *DB) PoolFor(ctx context.Context, path string) (shoal.Pool, error) {
	const op = "catalog.PoolFor"
	cands := append([]string{"/"}, ancestors(path)...)
	if path != "/" {
		cands = append(cands, path)
	}
	args := append(db.key.args(make([]any, 0, len(cands)+1), cands...), shoal.DefaultPool)
	rows, err := db.query(ctx, `SELECT e.path, d.pool, p.layout FROM entries e
		JOIN dir_pools d ON d.dir_id = e.id LEFT JOIN pools p ON p.name = d.pool
		WHERE `+db.key.in(len(cands))+`
		UNION ALL SELECT NULL, name, layout FROM pools WHERE name = ?`, args...)
	if err != nil {
		return shoal.Pool{}, db.fail(op, path, err)
	}
	defer rows.Close()
	best, bestLen := shoal.Pool{Name: shoal.DefaultPool}, -1
	var bestLayout, defaultLayout *string
	for rows.Next() {
		var p, layout *string
		var name string
		if err := rows.Scan(&p, &name, &layout); err != nil {
			return shoal.Pool{}, db.fail(op, path, err)
		}
		switch {
		case p == nil: // the default pool's row
			defaultLayout = layout
		case len(*p) > bestLen:
			best.Name, bestLen, bestLayout = name, len(*p), layout
		}
	}
	if err := rows.Err(); err != nil {
		return shoal.Pool{}, db.fail(op, path, err)
	}
	if bestLayout == nil && bestLen >= 0 && best.Name != shoal.DefaultPool {
		return shoal.Pool{}, shoal.Errorf(op, shoal.KindCorrupt, "directory mapped to unknown pool %q", best.Name)
	}
	if bestLayout == nil {
		// No mapped ancestor, or one mapped to the default pool.
		bestLayout = defaultLayout
	}
	if bestLayout == nil {
		return shoal.Pool{Name: shoal.DefaultPool, Layout: shoal.DefaultLayout}, nil
	}
	l, err := shoal.ParseLayout(*bestLayout)
	if err != nil {
		return shoal.Pool{}, shoal.E(op, path, shoal.KindCorrupt, err)
	}
	best.Layout = l
	return best, nil
}

// ReplaceReplica points one replica row of path's file at new.
func (db *DB) ReplaceReplica(ctx context.Context, path string, old, new shoal.Replica, graceUntil time.Time) error {
	const op = "catalog.ReplaceReplica"
	if new.Server == "" || !shoal.ValidObjectID(new.Object) {
		return shoal.Errorf(op, shoal.KindInvalid, "new replica needs a server and a valid object id")
	}
	return db.inTx(ctx, op, path, func(t *tx) error {
		self, _, err := t.lockTree(ctx, path)
		if err != nil {
			return err
		}
		if self == nil || self.isDir {
			return shoal.Errorf(op, shoal.KindNotFound, "%s is not a file any more", path)
		}
		if old.Server == "" {
			return t.addShard(ctx, op, path, self.id, new)
		}
		res, err := t.exec(ctx, `UPDATE replicas SET server = ?, object = ?, shard = ?, size = ?, sum = ?
			WHERE entry_id = ? AND server = ? AND object = ? AND shard = ?`,
			new.Server, new.Object, new.Shard, new.Size, int64(new.Sum), self.id, old.Server, old.Object, old.Shard)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return shoal.Errorf(op, shoal.KindNotFound, "%s has no replica %s/%s shard %d any more", path, old.Server, old.Object, old.Shard)
		}
		if err := t.setReplicaList(ctx, self.id); err != nil {
			return err
		}
		return t.garbageUnreferenced(ctx, []objRef{{old.Server, old.Object}}, graceUntil)
	})
}

// addShard records shard new.Shard of an erasure-coded file that has no
// row for it (a degraded write left it out; repair rebuilt it).
func (t *tx) addShard(ctx context.Context, op, path string, entryID int64, new shoal.Replica) error {
	var n int
	if err := t.queryRow(ctx, `SELECT COUNT(*) FROM replicas WHERE entry_id = ? AND shard = ?`, entryID, new.Shard).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return shoal.Errorf(op, shoal.KindExist, "%s has a row for shard %d", path, new.Shard)
	}
	if _, err := t.exec(ctx, `INSERT INTO replicas (entry_id, server, object, shard, size, sum) VALUES (?, ?, ?, ?, ?, ?)`,
		entryID, new.Server, new.Object, new.Shard, new.Size, int64(new.Sum)); err != nil {
		return err
	}
	return t.setReplicaList(ctx, entryID)
}
