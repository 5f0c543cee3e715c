package md

import (
	"strings"
	"testing"

	"shoal/storetest"
	"shoal/wire"
)

// TestEC42Cluster: an ec:4+2 pool of seven real data servers behind md
// (redirect and proxy) and a real gw. Files written both ways read back
// byte-exact, Range too, with any two servers of a file down; three down
// is a clear 503, never wrong bytes; flipped bytes in a shard are read
// around, reported by scrub and rebuilt by repair; a dead server's shards
// are rebuilt onto the seventh, after which two more may die.
func TestEC42Cluster(t *testing.T) {
	c := newCluster(t)
	c.addDisks("ec", 7)
	c.pool("ec", "ec:4+2", "/ec")

	files := c.putECFiles()
	entry := c.entry
	for p, data := range files {
		e := entry(p)
		if e.Layout.String() != "ec:4+2" || len(e.Replicas) != 6 || e.Size != int64(len(data)) {
			t.Fatalf("%s: layout %v, %d replicas, size %d", p, e.Layout, len(e.Replicas), e.Size)
		}
		c.mustGet(p, data)
	}
	a := entry("/ec/a")
	shardOn := func(i int) string { return a.Replicas[i].Server }

	// Every pair of a's shard servers down: reads go on.
	for i := range 6 {
		for j := i + 1; j < 6; j++ {
			c.kill(shardOn(i), shardOn(j))
			c.mustGet("/ec/a", files["/ec/a"])
			c.start(shardOn(i))
			c.start(shardOn(j))
		}
	}
	// Three down: 503 with a reason, never 200.
	c.kill(shardOn(0), shardOn(2), shardOn(5))
	for _, base := range []string{c.rURL, c.pURL} {
		st, body := c.do("GET", base, "/ec/a", nil, nil)
		if st != 503 || !strings.Contains(string(body), "unavailable") {
			t.Fatalf("GET with 3 of 6 down via %s: %d %.200s, want 503", base, st, body)
		}
	}
	// Writes need six live servers of the pool: with three of seven down, 507.
	c.waitDead()
	st, body := c.do("PUT", c.pURL, "/ec/c", nil, storetest.Data(3, 100000))
	if st != 507 || !strings.Contains(string(body), "pool ec") {
		t.Fatalf("PUT with 4 live of ec:4+2: %d %s, want 507 naming the pool", st, body)
	}
	c.start(shardOn(0))
	c.start(shardOn(2))
	c.start(shardOn(5))
	c.waitLive(a.Replicas[0].Server, a.Replicas[2].Server, a.Replicas[5].Server)

	// Bit rot in shard 1: reads are still exact, scrub reports it, repair
	// rebuilds it in place, scrub is then clean.
	flip(t, c.objectFile(shardOn(1), a.Replicas[1].Object), 4096)
	c.mustGet("/ec/a", files["/ec/a"])
	var sr wire.ScrubReport
	c.admin(wire.PathAdminScrub, wire.ScrubRequest{RateMBps: 50}, &sr)
	if sr.Files != 2 || sr.Bad != 1 || len(sr.Problems) != 1 || sr.Problems[0].Server != shardOn(1) || !strings.Contains(sr.Problems[0].Problem, "corrupt") {
		t.Fatalf("scrub: %+v", sr)
	}
	var rr wire.RepairReport
	c.admin(wire.PathAdminRepair, struct{}{}, &rr)
	if rr.Repaired != 1 || rr.Failed != 0 || rr.Healthy != 1 {
		t.Fatalf("repair of the corrupt shard: %+v", rr)
	}
	c.admin(wire.PathAdminScrub, wire.ScrubRequest{}, &sr)
	if sr.Bad != 0 {
		t.Fatalf("scrub after repair: %+v", sr)
	}

	// A server dies for good: repair rebuilds its shards on the seventh
	// server and moves the rows; then two more may die.
	dead := shardOn(3)
	// Each file uses 6 of the 7 servers, chosen at random: /ec/b may or
	// may not have a shard on the dead one.
	wantRepaired := 0
	for p := range files {
		for _, r := range entry(p).Replicas {
			if r.Server == dead {
				wantRepaired++
				break
			}
		}
	}
	c.kill(dead)
	c.waitDead()
	c.admin(wire.PathAdminRepair, struct{}{}, &rr)
	if rr.Failed != 0 || rr.Repaired != wantRepaired {
		t.Fatalf("repair with %s dead: %+v", dead, rr)
	}
	a = entry("/ec/a")
	for _, r := range a.Replicas {
		if r.Server == dead {
			t.Fatalf("a shard still on the dead server: %+v", a.Replicas)
		}
	}
	c.kill(shardOn(0), shardOn(4))
	for p, data := range files {
		c.mustGet(p, data)
	}
}
