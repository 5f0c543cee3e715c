package cache

import (
	"context"
	"time"

	"shoal"
)

// Every mutation goes to the inner catalog first, then invalidates what
// it may have changed (doc.go explains the keys). A mutation that failed
// with a definite error changed nothing and invalidates nothing, so that
// e.g. a client repeating MKCOL on a big directory cannot flush its subtree.

// change says how a mutation touched a path.
type change uint8

const (
	// changedNode: the entry of the path itself changed (its parent's
	// mtime after a child came or went, its properties).
	changedNode change = iota
	// created: the path now exists where it may not have (or a file was
	// replaced); answers below it change from "not found" to "not a
	// directory".
	created
	// replacedTree: the path and everything below it may be gone or new.
	replacedTree
)

type touched struct {
	path string
	how  change
}

// mayHaveChanged reports whether the catalog may have changed despite
// err: a definite error promises nothing happened.
func mayHaveChanged(err error) bool {
	if err == nil {
		return true
	}
	switch shoal.KindOf(err) {
	case shoal.KindOther, shoal.KindUnavailable, shoal.KindTimeout:
		return true
	}
	return false
}

// invalidate forgets what the mutation may have changed, in L1 and L2.
func (c *Catalog) invalidate(ctx context.Context, ts ...touched) {
	if c.l1 != nil {
		for _, t := range ts {
			switch t.how {
			case replacedTree:
				c.l1.epoch.Add(1)
				c.l1props.epoch.Add(1)
			case created:
				c.l1.negEpoch.Add(1)
			}
			c.l1.forget(t.path)
			c.l1props.forget(t.path)
		}
	}
	if c.l2 != nil {
		keys := make([]string, 0, 2*len(ts))
		for _, t := range ts {
			keys = append(keys, c.l2.key(keyNode, t.path))
			if t.how != changedNode && t.path != "/" {
				keys = append(keys, c.l2.key(keyTree, t.path))
			}
		}
		// Invalidate even if the client went away: the mutation is done.
		c.l2.bump(context.WithoutCancel(ctx), keys)
	}
}

// entryAndParent lists a path that changed how, and its parent's entry
// (whose mtime follows its children).
func entryAndParent(path string, how change) []touched {
	if path == "/" {
		return []touched{{path, how}}
	}
	return []touched{{path, how}, {shoal.ParentPath(path), changedNode}}
}

// ForgetTree forgets every answer at or below path, and path's parent's
// entry, for a writer that changed the catalog around this decorator
// (shoal admin populate): in L2 for every md sharing it, in this
// process's L1. The root's children must be forgotten one by one (the
// root's tree generation is not kept).
func (c *Catalog) ForgetTree(ctx context.Context, path string) {
	c.invalidate(ctx, entryAndParent(path, replacedTree)...)
}

func (c *Catalog) Mkdir(ctx context.Context, path string, mtime time.Time) (*shoal.Entry, error) {
	e, err := c.inner.Mkdir(ctx, path, mtime)
	if mayHaveChanged(err) {
		c.invalidate(ctx, entryAndParent(path, created)...)
	}
	return e, err
}

func (c *Catalog) Remove(ctx context.Context, path string, graceUntil time.Time) error {
	err := c.inner.Remove(ctx, path, graceUntil)
	if mayHaveChanged(err) {
		c.invalidate(ctx, entryAndParent(path, replacedTree)...)
	}
	return err
}

func (c *Catalog) Move(ctx context.Context, src, dst string, overwrite bool, graceUntil time.Time) (bool, error) {
	created, err := c.inner.Move(ctx, src, dst, overwrite, graceUntil)
	if mayHaveChanged(err) {
		c.invalidate(ctx, append(entryAndParent(src, replacedTree), entryAndParent(dst, replacedTree)...)...)
	}
	return created, err
}

func (c *Catalog) Copy(ctx context.Context, src, dst string, overwrite bool, graceUntil time.Time) (bool, error) {
	created, err := c.inner.Copy(ctx, src, dst, overwrite, graceUntil)
	if mayHaveChanged(err) {
		c.invalidate(ctx, entryAndParent(dst, replacedTree)...)
	}
	return created, err
}

func (c *Catalog) PutInline(ctx context.Context, path string, data []byte, sums shoal.Sums, mtime time.Time, cond shoal.Condition, graceUntil time.Time) (*shoal.Entry, error) {
	e, err := c.inner.PutInline(ctx, path, data, sums, mtime, cond, graceUntil)
	if mayHaveChanged(err) {
		c.invalidate(ctx, entryAndParent(path, created)...)
	}
	return e, err
}

func (c *Catalog) PutFile(ctx context.Context, path string, l shoal.Layout, commit *shoal.Commit, cond shoal.Condition, graceUntil time.Time) (*shoal.Entry, error) {
	if cond.Client != "" && c.noLocks.known(time.Now()) {
		cond.Client = "" // no lock exists (SoleMD): spare the commit its lock query
	}
	e, err := c.inner.PutFile(ctx, path, l, commit, cond, graceUntil)
	if mayHaveChanged(err) {
		c.invalidate(ctx, entryAndParent(path, created)...)
	}
	return e, err
}

// FinishUpload invalidates the path of the entry it made visible. When it
// fails the commit names no path; it changed nothing unless the error is
// ambiguous (the catalog unreachable mid-commit), a case left to the TTLs.
func (c *Catalog) FinishUpload(ctx context.Context, commit *shoal.Commit, graceUntil time.Time) (*shoal.Entry, error) {
	e, err := c.inner.FinishUpload(ctx, commit, graceUntil)
	if err == nil {
		c.invalidate(ctx, entryAndParent(e.Path, created)...)
	}
	return e, err
}

func (c *Catalog) PatchProps(ctx context.Context, path string, set, remove []shoal.Prop) error {
	err := c.inner.PatchProps(ctx, path, set, remove)
	if mayHaveChanged(err) {
		c.invalidate(ctx, touched{path, changedNode})
	}
	return err
}
