package md

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"

	"shoal"
)

// lock is one WebDAV write lock (RFC 4918 6).
type lock struct {
	token     string // "opaquelocktoken:…"
	root      string // clean path of the locked resource
	infinity  bool   // Depth: infinity (else 0)
	exclusive bool
	owner     string // inner XML of <D:owner>, re-serialized
	timeout   time.Duration
	expires   time.Time
}

// covers reports whether the lock applies to path.
func (l *lock) covers(path string) bool {
	return path == l.root || l.infinity && shoal.IsWithin(path, l.root)
}

// lockManager keeps locks in memory. Locks are therefore per md process:
// a deployment with several md replicas behind one name needs sticky
// clients for LOCK (or no locking); see the package report.
type lockManager struct {
	mu    sync.Mutex
	locks map[string]*lock
}

const (
	defaultLockTimeout = time.Hour
	maxLockTimeout     = 7 * 24 * time.Hour
)

func newLockManager() *lockManager { return &lockManager{locks: map[string]*lock{}} }

// expire drops locks past their timeout; mu must be held.
func (m *lockManager) expire(now time.Time) {
	for t, l := range m.locks {
		if now.After(l.expires) {
			delete(m.locks, t)
		}
	}
}

// empty reports whether no lock exists (the fast path of every write).
func (m *lockManager) empty() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expire(time.Now())
	return len(m.locks) == 0
}

// create takes a new lock; a conflicting lock is errLocked.
func (m *lockManager) create(l *lock) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	m.expire(now)
	for _, o := range m.locks {
		overlap := o.covers(l.root) || l.covers(o.root)
		if overlap && (o.exclusive || l.exclusive) {
			return errLocked
		}
	}
	var b [16]byte
	rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	l.token = "opaquelocktoken:" + h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
	l.expires = now.Add(l.timeout)
	m.locks[l.token] = l
	return nil
}

// refresh extends the lock named by token if it covers path.
func (m *lockManager) refresh(token, path string, timeout time.Duration) (*lock, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expire(time.Now())
	l, ok := m.locks[token]
	if !ok || !l.covers(path) {
		return nil, false
	}
	l.timeout = timeout
	l.expires = time.Now().Add(timeout)
	c := *l
	return &c, true
}

// unlock removes the lock named by token if it covers path.
func (m *lockManager) unlock(token, path string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.locks[token]
	if !ok || !l.covers(path) {
		return false
	}
	delete(m.locks, token)
	return true
}

// active reports whether token names a live lock covering path.
func (m *lockManager) active(token, path string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.locks[token]
	return ok && time.Now().Before(l.expires) && l.covers(path)
}

// covering returns copies of the locks that apply to path.
func (m *lockManager) covering(path string) []lock {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expire(time.Now())
	var out []lock
	for _, l := range m.locks {
		if l.covers(path) {
			out = append(out, *l)
		}
	}
	return out
}

// check returns errLocked unless every lock that applies to path (or,
// with subtree, lies below it) has its token among submitted; a shared
// lock is satisfied by any token on the same root.
func (m *lockManager) check(path string, subtree bool, submitted []string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expire(time.Now())
	if len(m.locks) == 0 {
		return nil
	}
	has := func(tok string) bool {
		for _, s := range submitted {
			if s == tok {
				return true
			}
		}
		return false
	}
	for _, l := range m.locks {
		if !(l.covers(path) || subtree && shoal.IsWithin(l.root, path)) {
			continue
		}
		if has(l.token) {
			continue
		}
		ok := false
		if !l.exclusive {
			for _, o := range m.locks {
				if o.root == l.root && has(o.token) {
					ok = true
				}
			}
		}
		if !ok {
			return errLocked
		}
	}
	return nil
}

// dropBelow removes locks on path and below it (after DELETE or MOVE).
func (m *lockManager) dropBelow(path string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for t, l := range m.locks {
		if shoal.IsWithin(l.root, path) {
			delete(m.locks, t)
		}
	}
}

// errLocked is the answer when a lock forbids a change: 423 Locked.
var errLocked = shoal.Errorf("lock", shoal.KindLocked, "resource is locked")
