package shoal

import (
	"context"
	"time"
)

// The catalog is the namespace: every entry, where its data is, the data
// servers, the pending uploads and the garbage queue. md is its only
// writer. Paths given to a catalog are clean (see CleanPath); the root "/"
// always exists. Every method returns *Error values whose Kind tells what
// happened; KindUnavailable means the backing store could not be reached
// and nothing was changed.

// Statter looks up one entry: KindNotFound if the path does not exist,
// KindNotDir if an ancestor is a file.
type Statter interface {
	Stat(ctx context.Context, path string) (*Entry, error)
}

// Lister lists the children of a directory, sorted by name: KindNotFound
// if dir does not exist, KindNotDir if it is a file.
type Lister interface {
	List(ctx context.Context, dir string) ([]*Entry, error)
}

// Namespace changes the tree. Each method is atomic: it happens whole or
// not at all.
type Namespace interface {
	// Mkdir creates a directory. KindExist if path exists (file or
	// directory); KindConflict if the parent is missing; KindNotDir if the
	// parent is a file.
	Mkdir(ctx context.Context, path string, mtime time.Time) (*Entry, error)

	// Remove deletes a file, or a directory with everything below it. The
	// objects no longer referenced go to the garbage queue, not before
	// graceUntil. KindNotFound if path does not exist; removing "/" is
	// KindPermission.
	Remove(ctx context.Context, path string, graceUntil time.Time) error

	// Move renames src (file or directory with its subtree) to dst. If dst
	// exists and overwrite is false: KindPrecondition; if overwrite is true
	// dst is removed first (its objects to the garbage queue). created says
	// whether dst did not exist before. KindNotFound if src is missing,
	// KindConflict if dst's parent is missing, KindInvalid if dst is src or
	// lies inside src.
	Move(ctx context.Context, src, dst string, overwrite bool, graceUntil time.Time) (created bool, err error)

	// Copy is Move that leaves src in place: dst gets new entries (new IDs)
	// sharing src's immutable objects and copying its dead properties.
	Copy(ctx context.Context, src, dst string, overwrite bool, graceUntil time.Time) (created bool, err error)
}

// Writer makes files visible.
type Writer interface {
	// PutInline creates or atomically replaces a small file whose whole
	// content is kept in the catalog. The new entry's Version is one more
	// than the replaced file's. KindIsDir if path is a directory,
	// KindConflict if the parent is missing, KindPrecondition if cond does
	// not hold.
	PutInline(ctx context.Context, path string, data []byte, sums Sums, mtime time.Time, cond Condition, graceUntil time.Time) (*Entry, error)

	// BeginUpload records a reservation (see Upload) and charges
	// u.Reserve to every quota governing u.Path in the same transaction:
	// KindQuota if one has no room (nothing is recorded then), counting
	// one more entry where no file is at u.Path yet. With u.Flexible it
	// may lower u.Reserve to what the quotas have left, and where none
	// governs u.Path it sets u.Reserve to u.UnquotedMax (unless 0). It
	// refuses, as the commit would, a path whose parent is missing
	// (KindConflict) or a file (KindNotDir), a directory (KindIsDir) and
	// a u.Cond that does not hold (KindPrecondition), so a caller need
	// not read the namespace first; the commit checks all of it again.
	BeginUpload(ctx context.Context, u *Upload) error

	// FinishUpload turns a durable upload into a visible file, replacing any
	// file at its path in the same transaction; replaced objects go to the
	// garbage queue. KindNotFound if the upload is unknown or expired (the
	// caller must then delete the objects), plus the errors of PutInline.
	// Finishing the same upload twice is KindNotFound the second time.
	// KindLocked if a live lock of a principal other than the upload's
	// Client now covers its path (taken after BeginUpload).
	FinishUpload(ctx context.Context, c *Commit, graceUntil time.Time) (*Entry, error)

	// PutFile makes durable objects that no reservation announced visible
	// as the file at path (layout l, replicas and sums from c; c.Upload is
	// ignored), in one transaction, replacing any file there as
	// FinishUpload does. The quotas governing path are charged here, so a
	// quota that cannot hold the file refuses it (KindQuota), plus the
	// errors of PutInline. md uses it for the objects it writes itself
	// (shoal all's own store) where no quota governs the path: one
	// catalog transaction a create instead of BeginUpload's and
	// FinishUpload's.
	PutFile(ctx context.Context, path string, l Layout, c *Commit, cond Condition, graceUntil time.Time) (*Entry, error)

	// AbortUpload forgets a reservation whose upload failed (the data
	// server refused or lost its body): what it held on quotas comes back
	// at once and its objects go to the garbage queue. KindNotFound if the
	// upload is unknown (finished or expired already).
	AbortUpload(ctx context.Context, id string) error

	// ExpireUploads deletes reservations that expired before now, gives
	// back what they held on quotas and puts their objects in the garbage
	// queue; it returns how many it expired.
	ExpireUploads(ctx context.Context, now time.Time) (int, error)

	// RenewUploads pushes the expiry of the reservations ids (those that
	// still exist, even past their expiry if not collected yet) to until,
	// never earlier: a data server renews the uploads it is receiving, so
	// a reservation whose body never came expires soon and one in
	// progress lives as long as it progresses.
	RenewUploads(ctx context.Context, ids []string, until time.Time) error
}

// PropStore keeps WebDAV dead properties per entry; they follow the entry
// on Move and are copied on Copy.
type PropStore interface {
	// Props returns the dead properties of path (KindNotFound if missing).
	Props(ctx context.Context, path string) ([]Prop, error)
	// PatchProps sets and removes properties atomically, all or none.
	PatchProps(ctx context.Context, path string, set []Prop, remove []Prop) error
}

// ServerRegistry knows the data servers.
type ServerRegistry interface {
	// PutServer registers a server or refreshes its heartbeat, space and URL.
	PutServer(ctx context.Context, s *Server) error
	// Servers lists every known server, retired ones included.
	Servers(ctx context.Context) ([]Server, error)
	// SetServerState changes a server's state (KindNotFound if unknown).
	SetServerState(ctx context.Context, id string, state ServerState) error
}

// GarbageQueue holds objects to delete from data servers.
type GarbageQueue interface {
	// Garbage returns up to limit items of server due at now.
	Garbage(ctx context.Context, server string, now time.Time, limit int) ([]Garbage, error)
	// DropGarbage removes items once their objects are gone.
	DropGarbage(ctx context.Context, ids []int64) error
}

// ReplicaWalker lets fsck compare the catalog with a server's disks.
type ReplicaWalker interface {
	// WalkReplicas calls fn for every replica on server, with the path of an
	// entry that references it; pending uploads' objects are reported with
	// the path "" so that fsck does not call them orphans.
	WalkReplicas(ctx context.Context, server string, fn func(path string, r Replica) error) error
	// NamedObjects returns those of objects that an entry's replica on
	// server names (in any order; pending uploads' objects are not
	// names): what a crash left staged is settled by it without a walk.
	NamedObjects(ctx context.Context, server string, objects []string) ([]string, error)
}

// Usage reports the bytes and files at or below a path (RFC 4331 quota-used-bytes).
type Usage interface {
	Usage(ctx context.Context, path string) (bytes, files int64, err error)
}

// Catalog is the whole namespace service that md runs on: implemented by
// the SQL catalog (catalog/) and the caching decorator (cache/).
type Catalog interface {
	Statter
	Lister
	PageLister
	Namespace
	Writer
	PropStore
	ServerRegistry
	GarbageQueue
	ReplicaWalker
	Usage
	LockStore
	PoolStore
	ReplicaReplacer
	JobStore
	QuotaStore
	Close() error
}
