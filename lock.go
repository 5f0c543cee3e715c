package shoal

import (
	"context"
	"time"
)

// Lock is a WebDAV write lock (RFC 4918 §6). Locks live in the catalog, so
// that LOCK, UNLOCK, refreshes and the 423s they cause are the same
// whichever md replica answers.
type Lock struct {
	Token     string // "opaquelocktoken:<uuid>"
	Root      string // clean path of the locked resource
	Infinity  bool   // Depth: infinity (else 0: the root alone)
	Exclusive bool   // else shared
	Owner     string // inner XML of the client's <D:owner>, re-serialized
	Principal string // Principal.ID of who took it: only it may use the token
	Timeout   time.Duration
	Expires   time.Time
}

// Covers reports whether the lock applies to path.
func (l *Lock) Covers(path string) bool {
	return path == l.Root || l.Infinity && IsWithin(path, l.Root)
}

// Blocking returns the first of locks (those that apply to a write) that
// stops a writer holding the locks held reports, or nil: a lock stops
// it unless it holds that lock or, the lock being shared, another lock on
// the same root. md asks it with the tokens a request submits, the
// catalog with the principal alone, so the rule is written once.
func Blocking(locks []Lock, held func(*Lock) bool) *Lock {
	for i := range locks {
		l := &locks[i]
		if held(l) {
			continue
		}
		ok := false
		if !l.Exclusive {
			for j := range locks {
				if locks[j].Root == l.Root && held(&locks[j]) {
					ok = true
					break
				}
			}
		}
		if !ok {
			return l
		}
	}
	return nil
}

// LockLimits bound the locks one principal, and everybody, may hold
// (0: no bound): beyond them CreateLock is KindUnavailable.
type LockLimits struct {
	PerPrincipal, Total int
}

// LockStore keeps the WebDAV locks. Locks past their Expires are ignored
// by every method and deleted by ExpireLocks. Remove and Move drop the
// locks rooted at the removed or moved path and below it, in their
// transaction: locks do not follow a resource (RFC 4918 §7.5).
type LockStore interface {
	// CreateLock records l (Token, Root, Timeout and Expires set by the
	// caller): KindLocked if a live lock overlapping it conflicts (either
	// is exclusive), KindUnavailable if lim is reached.
	CreateLock(ctx context.Context, l *Lock, lim LockLimits, now time.Time) error
	// Locks returns the live locks that cover path and, with below, also
	// those rooted strictly below it.
	Locks(ctx context.Context, path string, below bool, now time.Time) ([]Lock, error)
	// RefreshLock gives the live lock token, which must cover path and
	// belong to principal, a new timeout: KindPrecondition if there is no
	// such lock, KindPermission if it is someone else's.
	RefreshLock(ctx context.Context, token, path, principal string, timeout time.Duration, now time.Time) (*Lock, error)
	// Unlock removes the lock token, which must cover path and belong to
	// principal: KindConflict if there is no such lock, KindPermission if
	// it is someone else's.
	Unlock(ctx context.Context, token, path, principal string, now time.Time) error
	// ExpireLocks deletes locks that expired before now.
	ExpireLocks(ctx context.Context, now time.Time) (int, error)
	// CountLocks reports how many live locks exist (a cheap "none at all"
	// test for the listing path).
	CountLocks(ctx context.Context, now time.Time) (int, error)
}
