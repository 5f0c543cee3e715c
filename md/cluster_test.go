package md_test

import (
	"strings"
	"testing"

	"shoal/internal/testsystem"
	"shoal/storetest"
)

// TestEC42Cluster: an ec:4+2 pool of seven real data servers behind md
// (redirect and proxy) and a real gw. Files written both ways read back
// byte-exact, Range too, with any two servers of a file down; three down
// is a clear 503, never wrong bytes; with three of seven down a write is
// 503 (they may come back: retry), never 507 (no space). (Scrub and
// repair of such a pool: jobs.TestRepairEC42.)
func TestEC42Cluster(t *testing.T) {
	c := testsystem.New(t)
	c.AddDisks("ec", 7)
	c.Pool("ec", "ec:4+2", "/ec")

	files := c.PutECFiles()
	entry := c.Entry
	for p, data := range files {
		e := entry(p)
		if e.Layout.String() != "ec:4+2" || len(e.Replicas) != 6 || e.Size != int64(len(data)) {
			t.Fatalf("%s: layout %v, %d replicas, size %d", p, e.Layout, len(e.Replicas), e.Size)
		}
		c.MustGet(p, data)
	}
	a := entry("/ec/a")
	shardOn := func(i int) string { return a.Replicas[i].Server }

	// Every pair of a's shard servers down: reads go on.
	for i := range 6 {
		for j := i + 1; j < 6; j++ {
			c.Kill(shardOn(i), shardOn(j))
			c.MustGet("/ec/a", files["/ec/a"])
			c.Start(shardOn(i))
			c.Start(shardOn(j))
		}
	}
	// Three down: 503 with a reason, never 200.
	c.Kill(shardOn(0), shardOn(2), shardOn(5))
	for _, base := range []string{c.RURL, c.PURL} {
		st, body := c.Do("GET", base, "/ec/a", nil, nil)
		if st != 503 || !strings.Contains(string(body), "unavailable") {
			t.Fatalf("GET with 3 of 6 down via %s: %d %.200s, want 503", base, st, body)
		}
	}
	// Writes need six live servers of the pool: with three of seven down,
	// 503.
	c.WaitDead()
	st, body := c.Do("PUT", c.PURL, "/ec/c", nil, storetest.Data(3, 100000))
	if st != 503 || !strings.Contains(string(body), "pool ec") {
		t.Fatalf("PUT with 4 live of ec:4+2: %d %s, want 503 naming the pool", st, body)
	}
}
