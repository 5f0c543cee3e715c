package catalog

import (
	"context"
	"strings"
	"time"

	"shoal"
)

// fileData is what a new file version consists of. Its replicas go to
// the replicas table and, as replica_list, into the entry row.
type fileData struct {
	size     int64
	sums     shoal.Sums
	mtime    time.Time
	inline   []byte // non-nil for inline files
	layout   string // "" for inline files
	replicas []shoal.Replica
	cond     shoal.Condition
}

// putFile creates or replaces the file at path inside t. A replaced
// file keeps its ID, gets Version+1, and its objects no longer referenced
// go to the garbage queue.
func (t *tx) putFile(ctx context.Context, op, path string, f fileData, graceUntil time.Time) (*shoal.Entry, error) {
	if path == "/" {
		return nil, shoal.E(op, path, shoal.KindIsDir)
	}
	self, parent, err := t.lockTree(ctx, path)
	if err != nil {
		return nil, err
	}
	if err := checkParent(op, path, parent); err != nil {
		return nil, err
	}
	var md5, sha []byte
	if len(f.sums.MD5) == 16 {
		md5 = f.sums.MD5
	}
	if len(f.sums.SHA256) == 32 {
		sha = f.sums.SHA256
	}
	mtime := f.mtime.UnixNano()
	var id int64
	switch {
	case self != nil && self.isDir:
		return nil, shoal.E(op, path, shoal.KindIsDir)
	case !f.cond.Holds(self.etag()):
		if self == nil {
			return nil, shoal.Errorf(op, shoal.KindPrecondition, "%s does not exist (If-Match)", path)
		}
		if f.cond.CreateOnly {
			return nil, shoal.Errorf(op, shoal.KindPrecondition, "%s exists", path)
		}
		return nil, shoal.Errorf(op, shoal.KindPrecondition, "%s has changed (If-Match)", path)
	case self != nil:
		id = self.id
		refs, err := t.replicaRefs(ctx, "id = ?", id)
		if err != nil {
			return nil, err
		}
		if len(refs) > 0 {
			if _, err := t.exec(ctx, `DELETE FROM replicas WHERE entry_id = ?`, id); err != nil {
				return nil, err
			}
		}
		if _, err := t.exec(ctx, `UPDATE entries SET size = ?, mtime_ns = ?, version = version + 1, adler32 = ?,
			md5 = ?, sha256 = ?, inline = ?, layout = ?, replica_list = ? WHERE id = ?`,
			f.size, mtime, int64(f.sums.Adler32), md5, sha, f.inline, f.layout, encodeReplicaList(f.replicas), id); err != nil {
			return nil, err
		}
		if err := t.insertReplicas(ctx, id, f.replicas); err != nil {
			return nil, err
		}
		if err := t.garbageUnreferenced(ctx, refs, graceUntil); err != nil {
			return nil, err
		}
	default:
		res, err := t.exec(ctx, `INSERT INTO entries (parent_id, name, path, path_hash, is_dir, size, mtime_ns, ctime_ns,
			version, adler32, md5, sha256, inline, layout, replica_list) VALUES (?, ?, ?, ?, 0, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?)`,
			parent.id, baseName(path), path, pathHash(path), f.size, mtime, time.Now().UnixNano(),
			int64(f.sums.Adler32), md5, sha, f.inline, f.layout, encodeReplicaList(f.replicas))
		if err != nil {
			if t.db.isDup(err) {
				if f.cond.CreateOnly {
					return nil, shoal.Errorf(op, shoal.KindPrecondition, "%s exists", path)
				}
				return nil, errRace // a concurrent create won: replace it instead
			}
			return nil, err
		}
		if id, err = res.LastInsertId(); err != nil {
			return nil, err
		}
		if err := t.insertReplicas(ctx, id, f.replicas); err != nil {
			return nil, err
		}
	}
	return t.entry(ctx, path)
}

// PutInline creates or replaces a small file kept whole in the catalog.
func (db *DB) PutInline(ctx context.Context, path string, data []byte, sums shoal.Sums, mtime time.Time, cond shoal.Condition, graceUntil time.Time) (*shoal.Entry, error) {
	const op = "catalog.PutInline"
	if data == nil {
		data = []byte{}
	}
	var e *shoal.Entry
	err := db.inTx(ctx, op, path, func(t *tx) error {
		var err error
		e, err = t.putFile(ctx, op, path, fileData{size: int64(len(data)), sums: sums, mtime: mtime,
			inline: data, cond: cond}, graceUntil)
		return err
	})
	return e, err
}

// BeginUpload records a reservation; KindExist if its ID is taken.
func (db *DB) BeginUpload(ctx context.Context, u *shoal.Upload) error {
	const op = "catalog.BeginUpload"
	if u.ID == "" || u.Object == "" || len(u.Servers) == 0 {
		return shoal.Errorf(op, shoal.KindInvalid, "upload needs an ID, an object and servers")
	}
	layout := u.Layout
	if layout.IsZero() {
		layout = shoal.DefaultLayout
	}
	return db.inTx(ctx, op, u.Path, func(t *tx) error {
		if u.MaxPending > 0 {
			var n int
			if err := t.queryRow(ctx, `SELECT COUNT(*) FROM uploads WHERE client = ? AND expires_ns > ?`,
				u.Client, time.Now().UnixNano()).Scan(&n); err != nil {
				return err
			}
			if n >= u.MaxPending {
				return shoal.Errorf(op, shoal.KindTooMany, "%d uploads of yours are pending, the most allowed: retry when one has finished", n)
			}
		}
		_, err := t.exec(ctx, `INSERT INTO uploads (id, path, servers, object, layout, create_only, if_match, client, expires_ns)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, u.ID, u.Path, strings.Join(u.Servers, ","), u.Object,
			layout.String(), u.Cond.CreateOnly, strings.Join(u.Cond.IfMatch, ","), u.Client, u.Expires.UnixNano())
		if db.isDup(err) {
			return shoal.Errorf(op, shoal.KindExist, "upload %s exists", u.ID)
		}
		return err
	})
}

// FinishUpload makes an upload's file visible and forgets the upload.
func (db *DB) FinishUpload(ctx context.Context, c *shoal.Commit, graceUntil time.Time) (*shoal.Entry, error) {
	const op = "catalog.FinishUpload"
	var e *shoal.Entry
	err := db.inTx(ctx, op, "", func(t *tx) error {
		var (
			path, servers, object, layout, ifMatch string
			cond                                   shoal.Condition
			expires                                int64
		)
		err := t.queryRow(ctx, `SELECT path, servers, object, layout, create_only, if_match, expires_ns FROM uploads WHERE id = ?`+t.db.d.lockSuffix(true), c.Upload).
			Scan(&path, &servers, &object, &layout, &cond.CreateOnly, &ifMatch, &expires)
		if isNoRows(err) {
			return shoal.Errorf(op, shoal.KindNotFound, "upload %s unknown or already finished", c.Upload)
		}
		if err != nil {
			return err
		}
		if ifMatch != "" {
			cond.IfMatch = strings.Split(ifMatch, ",")
		}
		if expires < time.Now().UnixNano() {
			return shoal.Errorf(op, shoal.KindNotFound, "upload %s expired", c.Upload)
		}
		res, err := t.exec(ctx, `DELETE FROM uploads WHERE id = ?`, c.Upload)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err == nil && n != 1 {
			// A concurrent FinishUpload or ExpireUploads took it first.
			return shoal.Errorf(op, shoal.KindNotFound, "upload %s already finished", c.Upload)
		}
		reps := c.Replicas
		if len(reps) == 0 {
			// The committer named no replicas: one per reserved server,
			// numbered as shards for erasure-coded layouts.
			l, _ := shoal.ParseLayout(layout)
			for i, s := range strings.Split(servers, ",") {
				r := shoal.Replica{Server: s, Object: object, Size: c.Size, Sum: c.Sums.Adler32}
				if l.Kind == shoal.LayoutEC {
					r.Shard, r.Size, r.Sum = i, 0, 0
				}
				reps = append(reps, r)
			}
		}
		e, err = t.putFile(ctx, op, path, fileData{size: c.Size, sums: c.Sums, mtime: c.MTime, layout: layout,
			replicas: reps, cond: cond}, graceUntil)
		return err
	})
	return e, err
}

// RenewUploads pushes the expiry of live reservations ids to until.
func (db *DB) RenewUploads(ctx context.Context, ids []string, until time.Time) error {
	const op = "catalog.RenewUploads"
	if len(ids) == 0 {
		return nil
	}
	args := []any{until.UnixNano(), until.UnixNano()}
	for _, id := range ids {
		args = append(args, id)
	}
	return db.inTx(ctx, op, "", func(t *tx) error {
		_, err := t.exec(ctx, `UPDATE uploads SET expires_ns = ? WHERE expires_ns < ? AND id IN (`+placeholders(len(ids))+`)`, args...)
		return err
	})
}

// expireBatch bounds how many uploads one ExpireUploads transaction drops.
const expireBatch = 500

// ExpireUploads drops reservations that expired before now and queues
// their objects (due at once: nobody may write them any more), in
// transactions of at most expireBatch uploads.
func (db *DB) ExpireUploads(ctx context.Context, now time.Time) (int, error) {
	total := 0
	for {
		n, err := db.expireSome(ctx, now)
		total += n
		if err != nil || n < expireBatch {
			return total, err
		}
	}
}

func (db *DB) expireSome(ctx context.Context, now time.Time) (int, error) {
	const op = "catalog.ExpireUploads"
	var n int
	err := db.inTx(ctx, op, "", func(t *tx) error {
		rows, err := t.query(ctx, `SELECT id, servers, object FROM uploads WHERE expires_ns < ? ORDER BY expires_ns LIMIT ?`+
			t.db.d.lockSuffix(true), now.UnixNano(), expireBatch)
		if err != nil {
			return err
		}
		var ids []any
		var refs []objRef
		for rows.Next() {
			var id, servers, object string
			if err := rows.Scan(&id, &servers, &object); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
			for _, s := range strings.Split(servers, ",") {
				refs = append(refs, objRef{s, object})
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		n = len(ids)
		if n == 0 {
			return nil
		}
		if err := t.queueGarbage(ctx, refs, now); err != nil {
			return err
		}
		_, err = t.exec(ctx, `DELETE FROM uploads WHERE id IN (`+placeholders(len(ids))+`)`, ids...)
		return err
	})
	return n, err
}
