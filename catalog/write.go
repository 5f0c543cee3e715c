package catalog

import (
	"bytes"
	"context"
	"errors"
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
	// held is what the upload being committed reserved, on the quotas
	// of the directories heldOn (see tx.charge).
	held   int64
	heldOn []int64
	// client is who uploaded it, checked against the locks taken since
	// (see lockedAgainst); "": no check.
	client string
}

// putFile creates or replaces the file at path inside t. A replaced
// file keeps its ID, gets Version+1, and its objects no longer referenced
// go to the garbage queue.
func (t *tx) putFile(ctx context.Context, op, path string, f fileData, graceUntil time.Time) (*shoal.Entry, error) {
	return t.putFileLooking(ctx, op, path, f, graceUntil, false)
}

// putFileLooking is putFile; with lookUp it reads path before writing it
// even where the directory cache would let it try an insert first.
func (t *tx) putFileLooking(ctx context.Context, op, path string, f fileData, graceUntil time.Time, lookUp bool) (*shoal.Entry, error) {
	if path == "/" {
		return nil, shoal.E(op, path, shoal.KindIsDir)
	}
	// Where a new file is acceptable under f.cond, a create tries the
	// insert before reading path: it fails only when path exists.
	maybeNew := !lookUp && checkTarget(op, path, nil, f.cond) == nil
	self, parent, quotas, chainLocks, known, err := t.lockPathCounting(ctx, path, f.client != "", maybeNew)
	if err != nil {
		return nil, err
	}
	if f.client != "" && chainLocks != 0 { // -1: not counted (SQLite)
		if err := t.lockedAgainst(ctx, op, path, f.client, time.Now()); err != nil {
			return nil, err
		}
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
	var made *shoal.Entry // a new file, as a re-read would find it
	if err := checkTarget(op, path, self, f.cond); err != nil {
		return nil, err
	}
	switch {
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
		ctime := time.Now().UnixNano()
		list := encodeReplicaList(f.replicas)
		onDup := ""
		if !known {
			onDup = t.db.d.lockOnDup()
		}
		res, err := t.exec(ctx, `INSERT INTO entries (parent_id, name, path, path_hash, is_dir, size, mtime_ns, ctime_ns,
			version, adler32, md5, sha256, inline, layout, replica_list) VALUES (?, ?, ?, ?, 0, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?)`+onDup,
			parent.id, baseName(path), path, pathHash(path), f.size, mtime, ctime,
			int64(f.sums.Adler32), md5, sha, f.inline, f.layout, list)
		if err == nil && onDup != "" {
			if id, err = res.LastInsertId(); err == nil && id == 0 {
				err = errTaken // the row found is locked, unchanged
			}
		}
		if err != nil {
			if errors.Is(err, errTaken) || t.db.isDup(err) {
				if !known { // path exists after all (the insert changed nothing)
					if f.cond.CreateOnly {
						return nil, t.createOnlyRefused(ctx, op, path, f.cond)
					}
					return t.putFileLooking(ctx, op, path, f, graceUntil, true)
				}
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
		if made, err = newFileEntry(id, parent.id, path, f, mtime, ctime, md5, sha, list); err != nil {
			return nil, err
		}
	}
	if len(quotas) > 0 || len(f.heldOn) > 0 {
		bytes, files := f.size, int64(1)
		if self != nil {
			bytes, files = f.size-self.size, 0
		}
		if err := t.charge(ctx, op, path, quotas, bytes, files, f.held, f.heldOn); err != nil {
			return nil, err
		}
	}
	if made != nil {
		return made, nil
	}
	return t.entry(ctx, path)
}

// newFileEntry is the entry of a file just inserted, as scanEntries would
// read it back (one query a create saved).
func newFileEntry(id, parent int64, path string, f fileData, mtime, ctime int64, md5, sha, list []byte) (*shoal.Entry, error) {
	// Copies, as a read gives: the caller may reuse its buffers.
	e := &shoal.Entry{ID: id, Parent: parent, Path: path, Size: f.size, MTime: time.Unix(0, mtime), CTime: time.Unix(0, ctime),
		Version: 1, Sums: shoal.Sums{Adler32: f.sums.Adler32, MD5: nonEmpty(bytes.Clone(md5)), SHA256: nonEmpty(bytes.Clone(sha))}}
	if f.layout == "" {
		e.Inline = append([]byte{}, f.inline...)
	} else if l, err := shoal.ParseLayout(f.layout); err == nil {
		e.Layout = l
	}
	reps, err := decodeReplicaList(list)
	if err != nil {
		return nil, shoal.E("catalog", path, err)
	}
	e.Replicas = reps
	return e, nil
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

// PutFile makes objects no reservation announced visible at path.
func (db *DB) PutFile(ctx context.Context, path string, l shoal.Layout, c *shoal.Commit, cond shoal.Condition, graceUntil time.Time) (*shoal.Entry, error) {
	const op = "catalog.PutFile"
	if len(c.Replicas) == 0 {
		return nil, shoal.Errorf(op, shoal.KindInvalid, "a file needs replicas")
	}
	if l.IsZero() {
		l = shoal.DefaultLayout
	}
	var e *shoal.Entry
	err := db.inTx(ctx, op, path, func(t *tx) error {
		var err error
		e, err = t.putFile(ctx, op, path, fileData{size: c.Size, sums: c.Sums, mtime: c.MTime, layout: l.String(),
			replicas: c.Replicas, cond: cond, client: cond.Client}, graceUntil)
		return err
	})
	return e, err
}

// BeginUpload records a reservation; KindExist if its ID is taken,
// KindQuota if a quota governing its path cannot hold u.Reserve, and
// what the commit would refuse the path for: KindConflict or KindNotDir
// for its parent, KindIsDir, KindPrecondition for u.Cond.
func (db *DB) BeginUpload(ctx context.Context, u *shoal.Upload) error {
	const op = "catalog.BeginUpload"
	if u.ID == "" || u.Object == "" || len(u.Servers) == 0 {
		return shoal.Errorf(op, shoal.KindInvalid, "upload needs an ID, an object and servers")
	}
	if u.Reserve < 0 {
		return shoal.Errorf(op, shoal.KindInvalid, "upload reserves %d bytes", u.Reserve)
	}
	if u.Path == "/" {
		return shoal.E(op, u.Path, shoal.KindIsDir)
	}
	layout := u.Layout
	if layout.IsZero() {
		layout = shoal.DefaultLayout
	}
	want := u.Reserve
	return db.inTx(ctx, op, u.Path, func(t *tx) error {
		u.Reserve = want // a retried transaction starts over
		// The namespace is checked here, as the commit will check it
		// again under locks, so that md need not read it first: a PUT
		// doomed by its parent, a directory at its path or its
		// conditions is refused before any byte of it moves.
		a, err := t.ancestry(ctx, u.Path, u.Client, u.MaxPending > 0)
		if err != nil {
			return err
		}
		if err := checkParent(op, u.Path, a.parent); err != nil {
			return err
		}
		if err := checkTarget(op, u.Path, a.self, u.Cond); err != nil {
			return err
		}
		if u.MaxPending > 0 && a.pending >= u.MaxPending {
			return shoal.Errorf(op, shoal.KindTooMany, "%d uploads of yours are pending, the most allowed: retry when one has finished", a.pending)
		}
		var ids []int64
		for _, q := range a.quotas {
			ids = append(ids, q.id)
			if room := q.Room(); u.Flexible && room >= 0 && room < u.Reserve {
				u.Reserve = room
			}
		}
		var held int64 // what the quotas hold
		switch {
		case len(ids) > 0:
			if u.Flexible && u.Reserve == 0 && want > 0 {
				return t.quotaRefusal(ctx, op, u.Path, ids, 1, 0, 0)
			}
			// An overwrite of a known size holds only what it adds: its
			// commit charges the new size less the old one (quotas count
			// files, not the blocks both versions take until then), so a
			// file can be replaced by one no larger even in a full quota.
			held = max(u.Reserve, 0)
			if a.self != nil && !u.Flexible {
				held = max(u.Reserve-a.self.size, 0)
			}
			if held > 0 || a.self == nil {
				if err := t.reserve(ctx, op, u.Path, ids, held, a.self == nil); err != nil {
					return err
				}
			}
		case u.Flexible && u.UnquotedMax != 0:
			u.Reserve = u.UnquotedMax // no quota to charge it to
		}
		_, err = t.exec(ctx, `INSERT INTO uploads (id, path, servers, object, layout, create_only, if_match, client, expires_ns, reserved, quota_dirs)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, u.ID, u.Path, strings.Join(u.Servers, ","), u.Object,
			layout.String(), u.Cond.CreateOnly, strings.Join(u.Cond.IfMatch, ","), u.Client, u.Expires.UnixNano(),
			held, encodeQuotaDirs(ids))
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
			path, servers, object, layout, ifMatch, quotaDirs, client string
			cond                                                      shoal.Condition
			expires, reserved                                         int64
		)
		const cols = `path, servers, object, layout, create_only, if_match, expires_ns, reserved, quota_dirs, client`
		// Where the database has it, one DELETE … RETURNING takes the
		// upload (an expired one comes back when the transaction fails).
		q := `SELECT ` + cols + ` FROM uploads WHERE id = ?` + t.db.d.lockSuffix(true)
		if t.db.deleteReturning {
			q = `DELETE FROM uploads WHERE id = ? RETURNING ` + cols
		}
		err := t.queryRow(ctx, q, c.Upload).
			Scan(&path, &servers, &object, &layout, &cond.CreateOnly, &ifMatch, &expires, &reserved, &quotaDirs, &client)
		if isNoRows(err) {
			return shoal.Errorf(op, shoal.KindNotFound, "upload %s unknown or already finished", c.Upload)
		}
		if err != nil {
			return err
		}
		if ifMatch != "" {
			cond.IfMatch = strings.Split(ifMatch, ",")
		}
		now := time.Now()
		if expires < now.UnixNano() {
			return shoal.Errorf(op, shoal.KindNotFound, "upload %s expired", c.Upload)
		}
		if !t.db.deleteReturning {
			res, err := t.exec(ctx, `DELETE FROM uploads WHERE id = ?`, c.Upload)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err == nil && n != 1 {
				// A concurrent FinishUpload or ExpireUploads took it first.
				return shoal.Errorf(op, shoal.KindNotFound, "upload %s already finished", c.Upload)
			}
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
			replicas: reps, cond: cond, held: reserved, heldOn: decodeQuotaDirs(quotaDirs), client: client}, graceUntil)
		return err
	})
	if refusesUpload(err) {
		// The upload can never be committed: give its reservation back now
		// rather than at its expiry (its objects are the committer's to
		// remove; queued as garbage too, harmlessly).
		db.dropUpload(ctx, c.Upload)
	}
	return e, err
}

// refusesUpload reports the errors of FinishUpload after which the same
// commit cannot succeed.
func refusesUpload(err error) bool {
	switch shoal.KindOf(err) {
	case shoal.KindPrecondition, shoal.KindConflict, shoal.KindIsDir, shoal.KindNotDir, shoal.KindQuota, shoal.KindLocked:
		return true
	}
	return false
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
		rows, err := t.query(ctx, `SELECT `+pendingCols+` FROM uploads WHERE expires_ns < ? ORDER BY expires_ns LIMIT ?`+
			t.db.d.lockSuffix(true), now.UnixNano(), expireBatch)
		if err != nil {
			return err
		}
		ups, err := scanPending(rows)
		if err != nil {
			return err
		}
		n = len(ups)
		return t.dropUploads(ctx, ups, now)
	})
	return n, err
}

// dropUpload forgets one upload that can never be committed, as
// ExpireUploads would; errors are left to the expiry.
func (db *DB) dropUpload(ctx context.Context, id string) {
	db.abort(context.WithoutCancel(ctx), "catalog.FinishUpload", id)
}

// AbortUpload forgets the reservation of a failed upload.
func (db *DB) AbortUpload(ctx context.Context, id string) error {
	return db.abort(ctx, "catalog.AbortUpload", id)
}

func (db *DB) abort(ctx context.Context, op, id string) error {
	return db.inTx(ctx, op, "", func(t *tx) error {
		rows, err := t.query(ctx, `SELECT `+pendingCols+` FROM uploads WHERE id = ?`+t.db.d.lockSuffix(true), id)
		if err != nil {
			return err
		}
		ups, err := scanPending(rows)
		if err != nil {
			return err
		}
		if len(ups) == 0 {
			return shoal.Errorf(op, shoal.KindNotFound, "upload %s unknown, finished or expired", id)
		}
		return t.dropUploads(ctx, ups, time.Now())
	})
}

// pending is what dropping an upload needs of its row.
type pending struct {
	id, servers, object string
	reserved            int64
	quotaDirs           []int64
}

const pendingCols = `id, servers, object, reserved, quota_dirs`

func scanPending(rows rowSet) ([]pending, error) {
	defer rows.Close()
	var out []pending
	for rows.Next() {
		var p pending
		var dirs string
		if err := rows.Scan(&p.id, &p.servers, &p.object, &p.reserved, &dirs); err != nil {
			return nil, err
		}
		p.quotaDirs = decodeQuotaDirs(dirs)
		out = append(out, p)
	}
	return out, rows.Err()
}

// dropUploads deletes uploads, gives back what they reserved on quotas
// and queues their objects as garbage, due at dueAt.
func (t *tx) dropUploads(ctx context.Context, ups []pending, dueAt time.Time) error {
	if len(ups) == 0 {
		return nil
	}
	var ids []any
	var refs []objRef
	release := map[int64]int64{}
	for _, u := range ups {
		ids = append(ids, u.id)
		for _, s := range strings.Split(u.servers, ",") {
			refs = append(refs, objRef{s, u.object})
		}
		if u.reserved > 0 {
			for _, d := range u.quotaDirs {
				release[d] += u.reserved
			}
		}
	}
	for dir, bytes := range release {
		if _, err := t.exec(ctx, `UPDATE quotas SET reserved = reserved - ? WHERE dir_id = ?`, bytes, dir); err != nil {
			return err
		}
	}
	if err := t.queueGarbage(ctx, refs, dueAt); err != nil {
		return err
	}
	_, err := t.exec(ctx, `DELETE FROM uploads WHERE id IN (`+placeholders(len(ids))+`)`, ids...)
	return err
}

// quotaNode is a quota governing a path, as BeginUpload reads it.
type quotaNode struct {
	id int64
	shoal.Quota
}

// ancestry is what BeginUpload decides a reservation on: path itself
// and its parent (nil where missing), the quotas on path's ancestors,
// and how many live reservations the client holds.
type ancestry struct {
	self, parent *node
	quotas       []quotaNode
	pending      int
}

// ancestry reads path and its ancestors with their quotas in one query,
// without locking them: the conditional UPDATE that charges the quotas
// decides, and the commit checks the namespace again under locks. With
// countPending the same query counts client's live reservations (every
// row carries the count; the root is always there).
func (t *tx) ancestry(ctx context.Context, path, client string, countPending bool) (ancestry, error) {
	chain := append([]string{"/"}, ancestors(path)...)
	if path != "/" {
		chain = append(chain, path)
	}
	pending, args := `0`, []any{}
	if countPending {
		pending = `(SELECT COUNT(*) FROM uploads WHERE client = ? AND expires_ns > ?)`
		args = append(args, client, time.Now().UnixNano())
	}
	args = t.db.key.args(args, chain...)
	rows, err := t.query(ctx, `SELECT e.id, e.path, e.is_dir, e.version, e.size, e.quota, e.tree_op, q.dir_id IS NOT NULL,
		COALESCE(q.bytes_limit, 0), COALESCE(q.files_limit, 0), COALESCE(q.used_bytes, 0), COALESCE(q.used_files, 0), COALESCE(q.reserved, 0),
		`+pending+` FROM entries e LEFT JOIN quotas q ON q.dir_id = e.id WHERE `+t.db.key.in(len(chain)), args...)
	if err != nil {
		return ancestry{}, err
	}
	defer rows.Close()
	var a ancestry
	pp := shoal.ParentPath(path)
	for rows.Next() {
		var (
			n        node
			q        quotaNode
			hasQuota bool
		)
		if err := rows.Scan(&n.id, &n.path, &n.isDir, &n.version, &n.size, &n.quota, &n.treeOp, &hasQuota,
			&q.Bytes, &q.Files, &q.UsedBytes, &q.UsedFiles, &q.Reserved, &a.pending); err != nil {
			return ancestry{}, err
		}
		switch {
		case n.path == path:
			a.self = &n
		case shoal.IsWithin(path, n.path): // an ancestor, not a hash collision
			if n.path == pp {
				a.parent = &n
			}
			if hasQuota {
				q.id, q.Dir = n.id, n.path
				a.quotas = append(a.quotas, q)
			}
		}
	}
	return a, rows.Err()
}

// errTaken: an insert ending in dialect.lockOnDup found its path taken.
var errTaken = errors.New("catalog: path taken")

// createOnlyRefused is the answer to a create-only write whose insert
// found path taken, read as it is (the writer has it locked, if anything
// is locked): the ancestors' locks are held already.
func (t *tx) createOnlyRefused(ctx context.Context, op, path string, cond shoal.Condition) error {
	rows, err := t.query(ctx, `SELECT `+nodeCols+` FROM entries e WHERE `+t.db.key.eq, t.db.key.of(path))
	if err != nil {
		return err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return err
		}
		return errRace // removed since: try again
	}
	var n node
	if err := scanNode(rows, &n); err != nil {
		return err
	}
	if n.treeOp != 0 && n.treeOp != t.treeOp {
		return errBusy // a tree operation holds it: its end decides
	}
	return checkTarget(op, path, &n, cond)
}
