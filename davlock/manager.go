// Package davlock keeps and enforces md's WebDAV locks (RFC 4918 class
// 2). The locks live in the catalog (shoal.LockStore), so every md
// replica enforces the same ones: a write asks the catalog for the locks
// on its path (one indexed query). Lockdiscovery, which allprop PROPFINDs
// ask for, is answered from the catalog only while some lock exists: the
// Manager keeps a count refreshed at most every CountTTL (and at once on
// its own LOCKs), so a lock taken through another md shows in
// lockdiscovery within that bound, and is enforced at once.
//
// md answers LOCK and UNLOCK and asks the Manager before every write; the
// wire formats (lockinfo, lockdiscovery, the If header) are package
// dav's. davlock must not import md, a catalog or cache implementation,
// or a server package: it works over Store (root interfaces).
package davlock

import (
	"context"
	"sync/atomic"
	"time"

	"shoal"
	"shoal/dav"
)

// Defaults of the lock limits (md's Options: Limits).
const (
	DefaultTimeout          = time.Hour // also the most a client may ask for
	DefaultMaxOwner         = 4 << 10   // bytes of <D:owner> XML
	DefaultPerPrincipal     = 100
	DefaultTotal            = 10_000
	defaultRequestedTimeout = 10 * time.Minute // a LOCK without a Timeout header
	CountTTL                = time.Second      // the most a lock taken through another md takes to show in lockdiscovery
)

// Store is the catalog as the locks need it: the locks, and the entries
// whose ETags an If header names.
type Store interface {
	shoal.LockStore
	shoal.Statter
}

// Limits bound the locks; zero fields take the defaults.
type Limits struct {
	Timeout      time.Duration // the longest a client may ask for
	MaxOwner     int           // the largest <D:owner>, in bytes
	PerPrincipal int           // locks one principal may hold (beyond: 503)
	Total        int           // locks everybody may hold (beyond: 503)
}

// Manager keeps the locks of one md. Safe for concurrent use.
type Manager struct {
	cat   Store
	base  context.Context // of every catalog call
	lim   Limits
	count lockCount
}

// New is the manager of the locks in cat; base is the context of its
// catalog calls.
func New(base context.Context, cat Store, lim Limits) *Manager {
	if lim.Timeout <= 0 {
		lim.Timeout = DefaultTimeout
	}
	if lim.MaxOwner <= 0 {
		lim.MaxOwner = DefaultMaxOwner
	}
	if lim.PerPrincipal <= 0 {
		lim.PerPrincipal = DefaultPerPrincipal
	}
	if lim.Total <= 0 {
		lim.Total = DefaultTotal
	}
	return &Manager{cat: cat, base: base, lim: lim}
}

// lockCount is the manager's view of how many locks exist, for
// lockdiscovery.
type lockCount struct {
	n          atomic.Int64
	at         atomic.Int64 // unix ns of the last refresh
	refreshing atomic.Bool
}

// Any reports whether some lock may exist.
func (m *Manager) Any() bool {
	now := time.Now()
	c := &m.count
	if now.UnixNano()-c.at.Load() > int64(CountTTL) && c.refreshing.CompareAndSwap(false, true) {
		if n, err := m.cat.CountLocks(m.base, now); err == nil {
			c.n.Store(int64(n))
			c.at.Store(now.UnixNano())
		} else {
			c.n.Store(1) // unknown: look
		}
		c.refreshing.Store(false)
	}
	return c.n.Load() > 0
}

// Locks returns the live locks that cover path (and, with subtree, lie
// below it) while some lock may exist; nil without asking the catalog
// otherwise (dav.PropSource.Locks).
func (m *Manager) Locks(path string, subtree bool) ([]shoal.Lock, error) {
	if !m.Any() {
		return nil, nil
	}
	return m.cat.Locks(m.base, path, subtree, time.Now())
}

// Check returns KindLocked unless every lock that applies to path (or,
// with subtree, lies below it) has its token among submitted, taken by
// who; a shared lock is satisfied by any such token on the same root.
func (m *Manager) Check(who, path string, subtree bool, submitted []string) error {
	locks, err := m.cat.Locks(m.base, path, subtree, time.Now())
	if err != nil || len(locks) == 0 {
		return err
	}
	return dav.CheckLocks(locks, who, submitted)
}

// active reports whether token names a live lock covering path.
func (m *Manager) active(token, path string) bool {
	locks, err := m.cat.Locks(m.base, path, false, time.Now())
	if err != nil {
		return false
	}
	for _, l := range locks {
		if l.Token == token {
			return true
		}
	}
	return false
}
