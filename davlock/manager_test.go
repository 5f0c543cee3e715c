package davlock

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"shoal"
	"shoal/catalog"
)

// TestLocks: a lock taken is enforced against others and satisfied by its
// holder's token (in the If header), shows while it lives, is refreshed by
// its token and released by its holder alone (the end-to-end tests, litmus
// and two md replicas, are md's).
func TestLocks(t *testing.T) {
	ctx := context.Background()
	db, err := catalog.Open(ctx, catalog.Options{DSN: "sqlite:" + filepath.Join(t.TempDir(), "catalog.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Mkdir(ctx, "/d", time.Now()); err != nil {
		t.Fatal(err)
	}
	m := New(ctx, db, Limits{})
	if m.Any() {
		t.Fatal("a lock before any was taken")
	}
	l := &shoal.Lock{Root: "/d", Principal: "alice", Exclusive: true, Infinity: true, Timeout: m.Timeout([]byte("Second-60"))}
	if err := m.Create(l); err != nil {
		t.Fatal(err)
	}
	if !m.Any() {
		t.Error("no lock seen after one was taken")
	}
	if locks, err := m.Locks("/d", false); err != nil || len(locks) != 1 {
		t.Errorf("locks on /d: %v, %v", locks, err)
	}
	ifh := []byte("(<" + l.Token + ">)")
	for _, c := range []struct {
		who  string
		h    []byte
		kind shoal.Kind
	}{
		{"bob", nil, shoal.KindLocked},
		{"alice", nil, shoal.KindLocked},
		{"bob", ifh, shoal.KindLocked}, // a token serves its holder only
		{"alice", ifh, shoal.KindOther},
		{"alice", []byte("(<opaquelocktoken:nope>)"), shoal.KindPrecondition},
		{"alice", []byte("</.shoal/x> (<" + l.Token + ">)"), shoal.KindInvalid},
	} {
		err := m.CheckWrite(c.who, "/d/f", false, c.h)
		if c.kind == shoal.KindOther && err != nil || c.kind != shoal.KindOther && !shoal.IsKind(err, c.kind) {
			t.Errorf("%s writes /d/f with If %q: %v, want %v", c.who, c.h, err, c.kind)
		}
	}
	if r, err := m.Refresh("alice", "/d", ifh, time.Hour); err != nil || r.Token != l.Token {
		t.Errorf("refresh: %v, %v", r, err)
	}
	if err := m.Unlock("bob", "/d", l.Token); err == nil {
		t.Error("bob released alice's lock")
	}
	if err := m.Unlock("alice", "/d", l.Token); err != nil {
		t.Fatal(err)
	}
	if err := m.CheckWrite("bob", "/d/f", false, nil); err != nil {
		t.Errorf("write after unlock: %v", err)
	}
}
