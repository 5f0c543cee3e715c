package davlock

import (
	"strings"

	"shoal"
	"shoal/dav"
	"shoal/wire"
)

// What a write must pass (RFC 4918 §10.4, §7): its If header, when it
// has one, evaluates true, and it submits the token of every lock on
// what it changes.

// CheckWrite enforces the If header h (KindPrecondition, 412, when it
// evaluates false) and the locks (KindLocked, 423, unless who submitted
// the token of every lock on path, or below it when subtree is set)
// before a request changes path.
func (m *Manager) CheckWrite(who, path string, subtree bool, h []byte) error {
	if len(h) == 0 {
		return m.Check(who, path, subtree, nil)
	}
	lists, err := parseIf(string(h))
	if err != nil {
		return err
	}
	if !m.evalIf(path, lists) {
		return shoal.Errorf("If", shoal.KindPrecondition, "If header does not match")
	}
	return m.Check(who, path, subtree, dav.SubmittedTokens(lists))
}

// CheckDestination checks the locks on a MOVE or COPY destination with
// the tokens of the If header h (whose conditions apply to the source).
func (m *Manager) CheckDestination(who, dst string, h []byte) error {
	var tokens []string
	if len(h) > 0 {
		if lists, err := parseIf(string(h)); err == nil {
			tokens = dav.SubmittedTokens(lists)
		}
	}
	return m.Check(who, dst, true, tokens)
}

// CheckIf evaluates the If header h of a request on path without the
// locks (a LOCK's): KindInvalid when malformed, KindPrecondition when it
// does not hold.
func (m *Manager) CheckIf(path string, h []byte) error {
	lists, err := parseIf(string(h))
	if err != nil {
		return err
	}
	if !m.evalIf(path, lists) {
		return shoal.Errorf("LOCK", shoal.KindPrecondition, "If header does not match")
	}
	return nil
}

// evalIf is true if any list holds: all its conditions (lock token active
// on the resource, entity tag equal to the resource's) hold.
func (m *Manager) evalIf(path string, lists []dav.IfList) bool {
	for _, l := range lists {
		res := path
		if l.Tag != "" {
			res = l.Tag
		}
		ok := true
		for _, c := range l.Conds {
			var holds bool
			if c.Token != "" {
				holds = m.active(c.Token, res)
			} else if e, err := m.cat.Stat(m.base, res); err == nil {
				holds = e.ETag() == c.ETag || "W/"+e.ETag() == c.ETag
			}
			if holds == c.Not {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// parseIf is dav.ParseIf refusing a resource tag under wire.Prefix, as a
// Destination there is refused.
func parseIf(h string) ([]dav.IfList, error) {
	lists, err := dav.ParseIf(h)
	if err != nil {
		return nil, err
	}
	for _, l := range lists {
		if shoal.IsWithin(l.Tag, strings.TrimSuffix(wire.Prefix, "/")) {
			return nil, dav.ErrMalformedIf
		}
	}
	return lists, nil
}
