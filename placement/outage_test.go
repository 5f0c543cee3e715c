package placement

import (
	"testing"
	"time"

	"shoal"
)

// TestCatalogClock: time during which md's server-list reads or heartbeat
// writes failed (KindUnavailable) does not count in a server's heartbeat
// age, during the outage and after it; other errors are answers, not
// outages.
func TestCatalogClock(t *testing.T) {
	var c catalogClock
	t0 := time.Unix(1000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	down := shoal.Errorf("catalog", shoal.KindUnavailable, "connection refused")
	seen := at(0)
	if got := c.age(seen, at(5)); got != 5*time.Second {
		t.Fatalf("age without outage = %v", got)
	}
	c.report(srcServerList, down, at(2))
	if !c.down() {
		t.Fatal("not down after a failed read")
	}
	if got := c.age(seen, at(20)); got != 2*time.Second {
		t.Errorf("age during an outage that began at 2 s = %v, want 2s", got)
	}
	c.report(srcHeartbeat, down, at(3))
	c.report(srcServerList, nil, at(10)) // reads work again, heartbeat writes still fail
	if !c.down() {
		t.Fatal("up while heartbeat writes fail")
	}
	c.report(srcHeartbeat, nil, at(12))
	if c.down() {
		t.Fatal("still down after both worked")
	}
	if got := c.age(seen, at(13)); got != 3*time.Second {
		t.Errorf("age 1 s after a 10 s outage = %v, want 3s", got)
	}
	if got := c.age(at(12.5), at(13)); got != 500*time.Millisecond {
		t.Errorf("age of a heartbeat after the outage = %v", got)
	}
	c.report(srcServerList, down, at(20))
	c.report(srcServerList, nil, at(21))
	if got := c.age(seen, at(22)); got != 11*time.Second { // 22 s less 10 s and 1 s
		t.Errorf("age across two outages = %v, want 11s", got)
	}
	c.report(srcHeartbeat, shoal.Errorf("catalog", shoal.KindInvalid, "bad row"), at(23))
	if c.down() {
		t.Error("an error that is not KindUnavailable counted as an outage")
	}
}

// TestSuspects: a server marked suspect stays so until its LastSeen moves
// past the one it had when marked (it heartbeated again), or md takes a
// heartbeat of it.
func TestSuspects(t *testing.T) {
	var s suspects
	sv := shoal.Server{ID: "a", LastSeen: time.Unix(100, 0)}
	other := shoal.Server{ID: "b", LastSeen: time.Unix(100, 0)}
	if s.is(&sv) {
		t.Fatal("suspect before any mark")
	}
	s.mark(&sv)
	if !s.is(&sv) || s.is(&other) {
		t.Fatal("mark")
	}
	again := sv
	again.LastSeen = sv.LastSeen.Add(time.Second)
	if s.is(&again) || s.is(&sv) {
		t.Error("still suspect after a newer heartbeat")
	}
	s.mark(&sv)
	s.clear("a")
	if s.is(&sv) || s.n.Load() != 0 {
		t.Error("still suspect after clear")
	}
}
