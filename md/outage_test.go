package md

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

// FuzzAcceptsMetalink: any Accept header either asks for a Metalink or
// not, without panicking; the answer does not depend on the case of the
// media type, and a q of 0 refuses it.
func FuzzAcceptsMetalink(f *testing.F) {
	for _, s := range []string{
		"application/metalink4+xml", "application/metalink4+xml;q=0", "*/*", "text/html, application/metalink4+xml;q=0.5",
		"Application/Metalink4+XML", "application/metalink+xml", ",,;", "application/metalink4+xml ; q=0.000",
		"application/metalink4+xml;q=", "application/metalink4+xml;q=1.5", "\x00;q=\xff",
		"application/metalin\u212a4+xml", // the Kelvin sign folds to k in Unicode, not in HTTP
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		got := acceptsMetalink([]byte(h))
		upper := acceptsMetalink([]byte(asciiUpper(h)))
		if got != upper {
			t.Fatalf("%q: %v, upper-cased %v", h, got, upper)
		}
		if got && !containsFold(h, ctMetalink) {
			t.Fatalf("%q accepted without naming %s", h, ctMetalink)
		}
	})
}

func asciiUpper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

func containsFold(s, sub string) bool {
	return len(sub) == 0 || indexString([]byte(asciiUpper(s)), asciiUpper(sub)) >= 0
}

func TestAcceptsMetalink(t *testing.T) {
	for h, want := range map[string]bool{
		"application/metalink4+xml":                  true,
		"text/html, application/metalink4+xml;q=0.5": true,
		" APPLICATION/METALINK4+XML ":                true,
		"application/metalink4+xml;q=0":              false,
		"application/metalink4+xml;q=0.000":          false,
		"*/*":                                        false,
		"application/*":                              false,
		"application/metalink+xml":                   false,
		"":                                           false,
	} {
		if got := acceptsMetalink([]byte(h)); got != want {
			t.Errorf("acceptsMetalink(%q) = %v, want %v", h, got, want)
		}
	}
}
