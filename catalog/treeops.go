package catalog

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"time"

	"shoal"
)

// Large tree operations. COPY, MOVE and DELETE of a directory holding
// more than Options.BigTree entries run as many short transactions
// instead of one long one, so that no other writer waits more than one
// chunk (tens of milliseconds) for them, and keep all-or-nothing
// visibility (bigtree.go):
//
//   - DELETE hides the tree in one step and answers; the tree's rows are
//     then removed in chunks in the background ("collected").
//   - COPY builds the copy hidden, in chunks, and publishes it in one step.
//   - MOVE builds a copy (sharing the source's objects) hidden, then in one
//     step publishes it and hides the source, which is collected after.
//
// Hidden: a tree_ops row with hidden = 1 names a root; Stat of a path at
// or below it answers NotFound, and the root's own entry is unlinked
// (parent_id = -op) so that no listing shows it.
//
// Busy: entries.tree_op marks each root's entry row (a source being
// copied, a copy being built, a tree being collected). Every write reads
// its path's ancestors (lockTree) and waits (errBusy) while one of them,
// or the path itself, is marked; writes that change a whole tree (Remove,
// Move, Copy of a directory) wait while a root lies below it (busyBelow).
// A source does not change while it is copied; a collected tree's name
// is free again once it is gone.
//
// Crash: every tree_ops row has an owner and a lease the owner renews at
// each chunk. An md finding a lapsed lease (treeOpsLoop, every
// treeOpsCheck) takes the operation over: a build is rolled back (what
// was built is collected), a collection finished.

// errBusy is a write waiting for a large tree operation (see above):
// soloTx waits and tries again.
var errBusy = errors.New("catalog: a large tree operation holds this path")

// Tree operation tuning; Options.BigTree and Options.TreeChunk override
// the first two (tests make every tree big).
const (
	DefaultBigTree   = 2000
	defaultTreeChunk = 1000                  // rows a chunk reads at most
	treeChunkTime    = 10 * time.Millisecond // a chunk's time budget
	treeLease        = 30 * time.Second
	treeOpsCheck     = 5 * time.Second
	busyWait         = 20 * time.Millisecond // first wait of a busy write; doubles up to busyWaitMax
	busyWaitMax      = 200 * time.Millisecond
)

// Roles of tree_ops rows.
const (
	roleSource  = "source"  // busy, visible: being copied
	roleBuild   = "build"   // busy, hidden: a copy being built
	roleCollect = "collect" // busy, hidden: being removed
)

// newTreeOp returns a fresh operation id: random, positive, so that -op
// is a parent_id no real directory has.
func newTreeOp() int64 {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return int64(binary.BigEndian.Uint64(b[:])>>2) + 1
}

func newOwner() string {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b[:])
}

// addTreeRoot records a root of operation op and marks its entry row.
// entryID 0: the entry does not exist yet (a copy's top, marked when
// built).
func (t *tx) addTreeRoot(ctx context.Context, op int64, role, path string, entryID, topID int64, grace time.Time) error {
	hidden := role != roleSource
	if _, err := t.exec(ctx, `INSERT INTO tree_ops (op, role, path, path_hash, hidden, top_id, grace_ns, owner, lease_until_ns)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, op, role, path, pathHash(path), hidden, topID, grace.UnixNano(),
		t.db.owner, time.Now().Add(treeLease).UnixNano()); err != nil {
		return err
	}
	if entryID != 0 {
		if _, err := t.exec(ctx, `UPDATE entries SET tree_op = ? WHERE id = ?`, op, entryID); err != nil {
			return err
		}
	}
	return nil
}

// unlink takes the top entry of a hidden tree out of its parent's
// listing.
func (t *tx) unlink(ctx context.Context, op, entryID int64) error {
	_, err := t.exec(ctx, `UPDATE entries SET parent_id = ?, tree_op = ? WHERE id = ?`, -op, op, entryID)
	return err
}

// renewTree extends op's lease if this DB still owns it; errTreeLost if
// another md took the operation over (its lease lapsed).
func (t *tx) renewTree(ctx context.Context, op int64) error {
	res, err := t.exec(ctx, `UPDATE tree_ops SET lease_until_ns = ? WHERE op = ? AND owner = ?`,
		time.Now().Add(treeLease).UnixNano(), op, t.db.owner)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return errTreeLost
	}
	return nil
}

var errTreeLost = shoal.Errorf("catalog", shoal.KindUnavailable, "a large tree operation was taken over by another md (its lease lapsed)")

// busyBelow is errBusy when a root of another tree operation lies at or
// below path (a write that changes path's whole tree must wait for it).
func (t *tx) busyBelow(ctx context.Context, path string) error {
	rows, err := t.query(ctx, `SELECT op, path FROM tree_ops`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var op int64
		var root string
		if err := rows.Scan(&op, &root); err != nil {
			return err
		}
		if op != t.treeOp && shoal.IsWithin(root, path) {
			return errBusy
		}
	}
	return rows.Err()
}

// hidden reports whether path lies at or below a hidden root.
func (db *DB) hidden(ctx context.Context, path string) (bool, error) {
	anc := append([]string{"/"}, ancestors(path)...)
	args := make([]any, 0, len(anc)+1)
	for _, a := range anc {
		args = append(args, pathHash(a))
	}
	args = append(args, pathHash(path))
	rows, err := db.query(ctx, `SELECT path FROM tree_ops WHERE hidden = 1 AND path_hash IN (`+placeholders(len(args))+`)`, args...)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	for rows.Next() {
		var root string
		if err := rows.Scan(&root); err != nil {
			return false, err
		}
		if shoal.IsWithin(path, root) {
			return true, nil
		}
	}
	return false, rows.Err()
}

// countBelow counts the entries below dir, stopping at limit+1.
func (t *tx) countBelow(ctx context.Context, dir string, limit int) (int, error) {
	lo, hi := subtreeRange(dir)
	var n int
	err := t.queryRow(ctx, `SELECT COUNT(*) FROM (SELECT 1 FROM entries WHERE path >= ? AND path < ? LIMIT ?) AS sub`,
		lo, hi, limit+1).Scan(&n)
	return n, err
}

// big reports whether the tree at n (a directory) takes the chunked path.
func (t *tx) big(ctx context.Context, n *node) (bool, error) {
	if n == nil || !n.isDir {
		return false, nil
	}
	c, err := t.countBelow(ctx, n.path, t.db.opts.BigTree)
	return c > t.db.opts.BigTree, err
}

// treeTx runs fn in a transaction of its own (queued with the batches)
// as part of operation op, renewing op's lease.
func (db *DB) treeTx(ctx context.Context, op int64, fn func(t *tx) error) error {
	return db.inTxAlone(ctx, "catalog.treeop", "", func(t *tx) error {
		t.treeOp = op
		if err := t.renewTree(ctx, op); err != nil {
			return err
		}
		return fn(t)
	})
}

// collect removes the hidden tree of op's collect row, a chunk per
// transaction, then the row: the tree's name is free again.
func (db *DB) collect(ctx context.Context, op int64) error {
	n := min(64, db.opts.TreeChunk) // rows per chunk, fitted to treeChunkTime
	for {
		done := false
		start := time.Now()
		err := db.treeTx(ctx, op, func(t *tx) error {
			var err error
			done, err = t.collectChunk(ctx, op, n)
			return err
		})
		if err != nil || done {
			return err
		}
		switch took := time.Since(start); {
		case took < treeChunkTime/2:
			n = min(2*n, db.opts.TreeChunk)
		case took > treeChunkTime:
			n = max(n/2, 1)
		}
	}
}

// collectChunk removes up to a chunk of the tree being collected, and
// once it is empty its top and op's rows. done: nothing is left.
func (t *tx) collectChunk(ctx context.Context, op int64, limit int) (done bool, err error) {
	var path string
	var top, grace int64
	err = t.queryRow(ctx, `SELECT path, top_id, grace_ns FROM tree_ops WHERE op = ? AND role = ?`, op, roleCollect).
		Scan(&path, &top, &grace)
	if isNoRows(err) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	lo, hi := subtreeRange(path)
	rows, err := t.query(ctx, `SELECT id FROM entries WHERE path >= ? AND path < ? LIMIT ?`, lo, hi, limit)
	if err != nil {
		return false, err
	}
	var ids []any
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return false, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return false, err
	}
	if len(ids) == 0 {
		if top != 0 {
			ids = append(ids, top)
		}
		done = true
	}
	if err := t.removeRows(ctx, ids, time.Unix(0, grace)); err != nil {
		return false, err
	}
	if done {
		if _, err := t.exec(ctx, `DELETE FROM tree_ops WHERE op = ? AND role = ?`, op, roleCollect); err != nil {
			return false, err
		}
	}
	return done, nil
}

// removeRows deletes the entries ids with their replicas and properties,
// queueing the objects no entry refers to any more.
func (t *tx) removeRows(ctx context.Context, ids []any, grace time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	in := `(` + placeholders(len(ids)) + `)`
	refs, err := t.replicaRefs(ctx, "id IN "+in, ids...)
	if err != nil {
		return err
	}
	if len(refs) > 0 {
		if _, err := t.exec(ctx, `DELETE FROM replicas WHERE entry_id IN `+in, ids...); err != nil {
			return err
		}
	}
	if _, err := t.exec(ctx, `DELETE FROM props WHERE entry_id IN `+in, ids...); err != nil {
		return err
	}
	if _, err := t.exec(ctx, `DELETE FROM entries WHERE id IN `+in, ids...); err != nil {
		return err
	}
	return t.garbageUnreferenced(ctx, refs, grace)
}

// collectInBackground collects op's tree after its operation answered.
// If this md stops first, another takes the lapsed operation over.
func (db *DB) collectInBackground(op int64) {
	db.treeWG.Add(1)
	db.collecting.Add(1)
	go func() {
		defer db.treeWG.Done()
		defer db.collecting.Done()
		db.collect(db.treeCtx, op)
	}()
}

// treeOpsLoop takes over the operations whose owner let their lease
// lapse (it stopped or crashed): every treeOpsCheck, and at once on
// start.
func (db *DB) treeOpsLoop() {
	defer db.treeWG.Done()
	tick := time.NewTicker(treeOpsCheck)
	defer tick.Stop()
	for {
		db.recoverTreeOps(db.treeCtx, time.Now())
		select {
		case <-db.treeCtx.Done():
			return
		case <-tick.C:
		}
	}
}

// recoverTreeOps takes over the lapsed operations: a build is rolled
// back (the copy is collected, the source released), a collection is
// finished.
func (db *DB) recoverTreeOps(ctx context.Context, now time.Time) {
	rows, err := db.query(ctx, `SELECT DISTINCT op FROM tree_ops WHERE lease_until_ns < ?`, now.UnixNano())
	if err != nil {
		return
	}
	var ops []int64
	for rows.Next() {
		var op int64
		if rows.Scan(&op) == nil {
			ops = append(ops, op)
		}
	}
	rows.Close()
	for _, op := range ops {
		claimed := false
		err := db.inTxAlone(ctx, "catalog.treeop", "", func(t *tx) error {
			t.treeOp = op
			claimed = false // afresh at every run of fn
			res, err := t.exec(ctx, `UPDATE tree_ops SET owner = ?, lease_until_ns = ? WHERE op = ? AND lease_until_ns < ?`,
				db.owner, time.Now().Add(treeLease).UnixNano(), op, now.UnixNano())
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil || n == 0 {
				return err // another md took it
			}
			claimed = true
			return t.abandon(ctx, op)
		})
		if err == nil && claimed {
			db.collect(ctx, op)
		}
	}
}

// abandon ends op without completing it: a copy being built becomes a
// tree to collect, a source is released. What is left is collected.
func (t *tx) abandon(ctx context.Context, op int64) error {
	if _, err := t.exec(ctx, `UPDATE entries SET tree_op = 0 WHERE tree_op = ? AND id IN
		(SELECT top_id FROM tree_ops WHERE op = ? AND role = ?)`, op, op, roleSource); err != nil {
		return err
	}
	if _, err := t.exec(ctx, `DELETE FROM tree_ops WHERE op = ? AND role = ?`, op, roleSource); err != nil {
		return err
	}
	_, err := t.exec(ctx, `UPDATE tree_ops SET role = ? WHERE op = ? AND role = ?`, roleCollect, op, roleBuild)
	return err
}
