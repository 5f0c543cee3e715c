package catalog

import (
	"context"
	"errors"
	"strings"
	"time"

	"shoal"
)

// node is the part of an entry that write transactions decide on.
type node struct {
	id      int64
	path    string
	isDir   bool
	version int64
	size    int64
	quota   bool  // a directory with a quota (entries.quota)
	treeOp  int64 // the tree operation this entry is a root of (0: none)
}

// etag is the node's ETag as shoal.Entry.ETag makes it; "" for nil.
func (n *node) etag() string {
	if n == nil {
		return ""
	}
	return (&shoal.Entry{ID: n.id, Version: n.version}).ETag()
}

// errRace marks a transaction that lost a create race to a concurrent
// one: inTx runs it again, and it then sees the winner's row.
var errRace = errors.New("catalog: concurrent create, retry")

const nodeCols = `id, path, is_dir, version, size, quota, tree_op`

func scanNode(sc interface{ Scan(...any) error }, n *node, extra ...any) error {
	return sc.Scan(append([]any{&n.id, &n.path, &n.isDir, &n.version, &n.size, &n.quota, &n.treeOp}, extra...)...)
}

// lockTree finds path and its parent inside a write transaction and
// locks them against concurrent writers: a shared lock on every ancestor
// (so none of them moves or vanishes meanwhile) and an exclusive lock on
// path itself. Every write locks this way, so two transactions conflict
// exactly when one changes a path the other lies under. Two queries at
// any depth (one for SQLite); either result may be nil. A path at or
// below the root of a large tree operation in progress (entries.tree_op,
// see treeops.go) is errBusy: the caller waits for the operation to end.
func (t *tx) lockTree(ctx context.Context, path string) (self, parent *node, err error) {
	self, parent, _, err = t.lockPath(ctx, path)
	return self, parent, err
}

// lockPath is lockTree that also returns the ids of the ancestors with a
// quota (path itself excluded): the quotas a change at path is charged
// to. Setting or removing a quota takes the exclusive lock on its
// directory, so the list holds until the transaction ends.
func (t *tx) lockPath(ctx context.Context, path string) (self, parent *node, quotas []int64, err error) {
	self, parent, quotas, _, _, err = t.lockPathCounting(ctx, path, false, false)
	return self, parent, quotas, err
}

// lockPathCounting is lockPath that, with countLocks, also counts the
// live locks rooted at path or an ancestor (a superset of those covering
// it), in the ancestors' query: a commit that must check the locks then
// asks for them only when there are some (MySQL: one statement a create
// fewer). chainLocks is -1 where no such query ran (SQLite): the caller
// asks. With maybeNew (a caller that will try to insert path, and look
// it up only when that fails), path itself is not read where it would be
// a query of its own: self is nil and known false. SQLite reads path with
// its ancestors, and nothing at all when every ancestor is in the
// directory cache (one statement of four a create fewer on the one
// writer's path); MySQL skips the path's exclusive read (one statement
// of five a create fewer, an overwrite two more).
func (t *tx) lockPathCounting(ctx context.Context, path string, countLocks, maybeNew bool) (self, parent *node, quotas []int64, chainLocks int, known bool, err error) {
	chainLocks = -1
	anc := append([]string{"/"}, ancestors(path)...)
	if path == "/" {
		anc = nil
	}
	// Where both locks are no-ops (SQLite: its one writer serialises
	// writers), the ancestors and path itself are one query.
	together := t.db.d.lockSuffix(false) == "" && t.db.d.lockSuffix(true) == ""
	busy := false
	pp := shoal.ParentPath(path)
	// see takes n into the result; it reports whether n is an ancestor.
	see := func(n *node) bool {
		mine := n.treeOp == 0 || n.treeOp == t.treeOp
		switch {
		case n.path == path:
			self = n
			busy = busy || !mine
		case shoal.IsWithin(path, n.path): // an ancestor (not a hash collision)
			if n.path == pp {
				parent = n
			}
			if n.quota {
				quotas = append(quotas, n.id)
			}
			busy = busy || !mine
			return true
		}
		return false
	}
	scan := func(q string, keys []any, extra ...any) error {
		rows, err := t.query(ctx, q, keys...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var n node
			if err := scanNode(rows, &n, extra...); err != nil {
				return err
			}
			if see(&n) {
				t.db.dirs.keep(n)
			}
		}
		return rows.Err()
	}
	const sel = `SELECT ` + nodeCols + ` FROM entries e WHERE `
	k := t.db.key
	if t.db.dirs != nil { // SQLite: ancestors kept by the writer need no read
		if err := t.checkDirs(); err != nil {
			return nil, nil, nil, -1, false, err
		}
	}
	keys := make([]any, 0, len(anc)+1)
	for _, a := range anc {
		if n, ok := t.db.dirs.get(a); ok {
			see(&n)
		} else {
			keys = append(keys, k.of(a))
		}
	}
	// known: path itself was read (self is what is there, or nil).
	known = !maybeNew || together && len(keys) > 0
	switch {
	case together && !known:
		// Every ancestor cached: a create reads nothing.
	case together: // one key left alone: SQLite reads IN (?) as = ?
		keys = append(keys, k.of(path))
		err = scan(sel+k.in(len(keys)), keys)
	default:
		switch {
		case len(keys) > 0 && countLocks:
			// The root is among the ancestors: the query has a row.
			count, args := lockCountQuery(path, time.Now())
			err = scan(`SELECT `+nodeCols+`, (`+count+`) FROM entries e WHERE `+k.in(len(keys))+
				t.db.d.lockSuffix(false), append(args, keys...), &chainLocks)
		case len(keys) > 0:
			err = scan(sel+k.in(len(keys))+t.db.d.lockSuffix(false), keys)
		}
		// A create does not lock path first: at READ COMMITTED a locking
		// read of a row that does not exist locks nothing, and the insert
		// takes the lock. Only an insert that finds path taken reads it.
		if err == nil && known {
			err = scan(sel+k.eq+t.db.d.lockSuffix(true), []any{k.of(path)})
		}
	}
	if err != nil {
		return nil, nil, nil, -1, false, err
	}
	if busy {
		return nil, nil, nil, -1, false, errBusy
	}
	return self, parent, quotas, chainLocks, known, nil
}

// checkParent says why parent cannot hold a new child.
func checkParent(op, path string, parent *node) error {
	if parent == nil {
		return shoal.Errorf(op, shoal.KindConflict, "parent of %s does not exist", path)
	}
	if !parent.isDir {
		return shoal.Errorf(op, shoal.KindNotDir, "parent of %s is a file", path)
	}
	return nil
}

// checkTarget says why a file cannot be written at path over self (nil
// where nothing is) under cond.
func checkTarget(op, path string, self *node, cond shoal.Condition) error {
	switch {
	case self != nil && self.isDir:
		return shoal.E(op, path, shoal.KindIsDir)
	case cond.Holds(self.etag()):
		return nil
	case self == nil:
		return shoal.Errorf(op, shoal.KindPrecondition, "%s does not exist (If-Match)", path)
	case cond.CreateOnly:
		return shoal.Errorf(op, shoal.KindPrecondition, "%s exists", path)
	}
	return shoal.Errorf(op, shoal.KindPrecondition, "%s has changed (If-Match)", path)
}

// entry re-reads an entry inside the transaction, replicas included.
func (t *tx) entry(ctx context.Context, path string) (*shoal.Entry, error) {
	rows, err := t.query(ctx, t.db.key.stat, t.db.key.of(path))
	if err != nil {
		return nil, err
	}
	es, err := scanEntries(rows)
	if err != nil {
		return nil, err
	}
	if len(es) != 1 {
		return nil, shoal.Errorf("catalog", shoal.KindOther, "entry %s vanished inside its transaction", path)
	}
	return es[0], nil
}

// objRef names an object on a server.
type objRef struct{ server, object string }

// replicaRefs lists the distinct objects referenced by the entries that
// cond (an SQL condition over entries with args) selects.
func (t *tx) replicaRefs(ctx context.Context, cond string, args ...any) ([]objRef, error) {
	rows, err := t.query(ctx, `SELECT DISTINCT server, object FROM replicas WHERE entry_id IN (SELECT id FROM entries WHERE `+cond+`)`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []objRef
	for rows.Next() {
		var r objRef
		if err := rows.Scan(&r.server, &r.object); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// garbageUnreferenced queues those refs that no replica row names any
// more: objects are shared after Copy, and only the last reference frees.
func (t *tx) garbageUnreferenced(ctx context.Context, refs []objRef, notBefore time.Time) error {
	const chunk = 100
	for len(refs) > 0 {
		n := min(chunk, len(refs))
		batch := refs[:n]
		refs = refs[n:]
		var cond strings.Builder
		args := make([]any, 0, 2*n)
		for i, r := range batch {
			if i > 0 {
				cond.WriteString(" OR ")
			}
			cond.WriteString("(server = ? AND object = ?)")
			args = append(args, r.server, r.object)
		}
		rows, err := t.query(ctx, `SELECT DISTINCT server, object FROM replicas WHERE `+cond.String(), args...)
		if err != nil {
			return err
		}
		live := map[objRef]bool{}
		for rows.Next() {
			var r objRef
			if err := rows.Scan(&r.server, &r.object); err != nil {
				rows.Close()
				return err
			}
			live[r] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		var dead []objRef
		for _, r := range batch {
			if !live[r] {
				dead = append(dead, r)
			}
		}
		if err := t.queueGarbage(ctx, dead, notBefore); err != nil {
			return err
		}
	}
	return nil
}

// queueGarbage inserts refs into the garbage queue in one statement.
func (t *tx) queueGarbage(ctx context.Context, refs []objRef, notBefore time.Time) error {
	if len(refs) == 0 {
		return nil
	}
	var q strings.Builder
	q.WriteString(`INSERT INTO garbage (server, object, not_before_ns) VALUES `)
	args := make([]any, 0, 3*len(refs))
	for i, r := range refs {
		if i > 0 {
			q.WriteByte(',')
		}
		q.WriteString("(?,?,?)")
		args = append(args, r.server, r.object, notBefore.UnixNano())
	}
	_, err := t.exec(ctx, q.String(), args...)
	return err
}

// removeTree deletes n (and, for a directory, everything below it) with
// its replicas and properties, queueing objects no longer referenced; what
// it held leaves the quotas governing it (quotas), and the quotas on n
// and below it go with it.
func (t *tx) removeTree(ctx context.Context, op string, n *node, quotas []int64, graceUntil time.Time) error {
	if len(quotas) > 0 {
		bytes, files, err := t.usageOf(ctx, n)
		if err != nil {
			return err
		}
		if err := t.charge(ctx, op, n.path, quotas, -bytes, -files, 0, nil); err != nil {
			return err
		}
	}
	cond, args := "id = ?", []any{n.id}
	if n.isDir {
		lo, hi := subtreeRange(n.path)
		cond, args = "id = ? OR (path >= ? AND path < ?)", []any{n.id, lo, hi}
		if _, err := t.exec(ctx, `DELETE FROM quotas WHERE dir_id IN (SELECT id FROM entries WHERE quota = 1 AND (`+cond+`))`, args...); err != nil {
			return err
		}
	}
	refs, err := t.replicaRefs(ctx, cond, args...)
	if err != nil {
		return err
	}
	sub := `(SELECT id FROM entries WHERE ` + cond + `)`
	if len(refs) > 0 {
		if _, err := t.exec(ctx, `DELETE FROM replicas WHERE entry_id IN `+sub, args...); err != nil {
			return err
		}
	}
	if _, err := t.exec(ctx, `DELETE FROM props WHERE entry_id IN `+sub, args...); err != nil {
		return err
	}
	if _, err := t.exec(ctx, `DELETE FROM entries WHERE `+cond, args...); err != nil {
		return err
	}
	return t.garbageUnreferenced(ctx, refs, graceUntil)
}

// insertReplicas adds entryID's replica rows in one statement.
func (t *tx) insertReplicas(ctx context.Context, entryID int64, reps []shoal.Replica) error {
	if len(reps) == 0 {
		return nil
	}
	var q strings.Builder
	q.WriteString(`INSERT INTO replicas (entry_id, server, object, shard, size, sum) VALUES `)
	args := make([]any, 0, 6*len(reps))
	for i, r := range reps {
		if i > 0 {
			q.WriteByte(',')
		}
		q.WriteString("(?,?,?,?,?,?)")
		args = append(args, entryID, r.Server, r.Object, r.Shard, r.Size, int64(r.Sum))
	}
	_, err := t.exec(ctx, q.String(), args...)
	return err
}
