package davlock

import (
	"time"

	"shoal"
	"shoal/dav"
)

// Taking, refreshing and releasing locks (LOCK and UNLOCK).

// Timeout is the timeout a LOCK asks for in its Timeout header h, within
// the limit.
func (m *Manager) Timeout(h []byte) time.Duration {
	return dav.ParseTimeout(h, defaultRequestedTimeout, m.lim.Timeout)
}

// Refresh gives the lock of who on path that the If header h names a new
// timeout (a LOCK without a body): KindInvalid without such a header,
// KindPrecondition if it names no lock of who on path.
func (m *Manager) Refresh(who, path string, h []byte, timeout time.Duration) (*shoal.Lock, error) {
	const op = "LOCK"
	lists, err := parseIf(string(h))
	if err != nil {
		return nil, shoal.Errorf(op, shoal.KindInvalid, "a lock refresh needs an If header with the lock token")
	}
	err = shoal.Errorf(op, shoal.KindPrecondition, "no such lock on this resource")
	for _, tok := range dav.SubmittedTokens(lists) {
		var l *shoal.Lock
		if l, err = m.cat.RefreshLock(m.base, tok, path, who, timeout, time.Now()); err == nil {
			return l, nil
		}
	}
	return nil, err
}

// CheckOwner refuses a <D:owner> larger than the limit.
func (m *Manager) CheckOwner(l *shoal.Lock) error {
	if len(l.Owner) > m.lim.MaxOwner {
		return shoal.Errorf("LOCK", shoal.KindInvalid, "lock owner is %d bytes, more than the %d allowed", len(l.Owner), m.lim.MaxOwner)
	}
	return nil
}

// Create takes lock l (Root, Timeout, Principal, scope, depth and owner
// set): its token and expiry are made here. KindLocked if it conflicts
// with a live lock, KindUnavailable beyond the limits.
func (m *Manager) Create(l *shoal.Lock) error {
	now := time.Now()
	l.Token, l.Expires = dav.NewLockToken(), now.Add(l.Timeout)
	if err := m.cat.CreateLock(m.base, l, shoal.LockLimits{PerPrincipal: m.lim.PerPrincipal, Total: m.lim.Total}, now); err != nil {
		return err
	}
	m.count.n.Add(1)
	return nil
}

// Unlock removes the lock token of who on path: KindConflict if it names
// no lock on this resource.
func (m *Manager) Unlock(who, path, token string) error {
	err := m.cat.Unlock(m.base, token, path, who, time.Now())
	if shoal.IsKind(err, shoal.KindConflict) {
		err = shoal.Errorf("UNLOCK", shoal.KindConflict, "lock token does not match a lock on this resource")
	}
	return err
}
