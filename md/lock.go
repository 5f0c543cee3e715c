package md

import (
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/dav"
)

// WebDAV locks (RFC 4918 §6) live in the catalog (shoal.LockStore), so
// every md replica enforces the same ones: a write asks the catalog for the
// locks on its path (one indexed query). Lockdiscovery, which allprop
// PROPFINDs ask for, is answered from the catalog only while some lock
// exists: md keeps a count refreshed at most every lockCountTTL (and at
// once on its own LOCKs), so a lock taken through another md shows in
// lockdiscovery within that bound, and is enforced at once.

// Defaults of the lock limits (Options).
const (
	DefaultLockTimeout       = time.Hour // also the most a client may ask for
	DefaultMaxLockOwner      = 4 << 10   // bytes of <D:owner> XML
	DefaultLocksPerPrincipal = 100
	DefaultLocksTotal        = 10_000
	defaultRequestedTimeout  = 10 * time.Minute // a LOCK without a Timeout header
	lockCountTTL             = time.Second
)

// principalID is who a request acts as, for lock ownership (see
// authn.go; requests without authentication act as shoal.Anonymous).
func principalID(ctx *fasthttp.RequestCtx) string { return principalOf(ctx).ID }

// clientID is who a request comes from, for per-client limits: its
// principal, or its address when anonymous.
func clientID(ctx *fasthttp.RequestCtx) string {
	if id := principalID(ctx); id != shoal.Anonymous.ID {
		return id
	}
	return "ip:" + ctx.RemoteIP().String()
}

// lockCount is md's view of how many locks exist, for lockdiscovery.
type lockCount struct {
	n          atomic.Int64
	at         atomic.Int64 // unix ns of the last refresh
	refreshing atomic.Bool
}

// anyLocks reports whether some lock may exist.
func (s *Server) anyLocks() bool {
	now := time.Now()
	c := &s.lockCount
	if now.UnixNano()-c.at.Load() > int64(lockCountTTL) && c.refreshing.CompareAndSwap(false, true) {
		if n, err := s.cat.CountLocks(s.base, now); err == nil {
			c.n.Store(int64(n))
			c.at.Store(now.UnixNano())
		} else {
			c.n.Store(1) // unknown: look
		}
		c.refreshing.Store(false)
	}
	return c.n.Load() > 0
}

// checkLocks returns KindLocked unless every lock that applies to path
// (or, with subtree, lies below it) has its token among submitted, taken
// by the same principal; a shared lock is satisfied by any such token on
// the same root.
func (s *Server) checkLocks(ctx *fasthttp.RequestCtx, path string, subtree bool, submitted []string) error {
	locks, err := s.cat.Locks(s.base, path, subtree, time.Now())
	if err != nil || len(locks) == 0 {
		return err
	}
	return dav.CheckLocks(locks, principalID(ctx), submitted)
}

// lockActive reports whether token names a live lock covering path.
func (s *Server) lockActive(token, path string) bool {
	locks, err := s.cat.Locks(s.base, path, false, time.Now())
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
