package md

import (
	"strings"
	"testing"

	"shoal/storetest"
	"shoal/wire"
)

// TestECDegradedWrite: with md.degraded_writes, an ec:4+2 pool with only
// five live servers takes writes on five (shard 5 left out, no row); the
// files read back, also with one more server down; scrub reports the
// missing shard; once a sixth server is live, repair adds it, after which
// any two may die. Fewer than K+1 live: still 507.
func TestECDegradedWrite(t *testing.T) {
	c := newCluster(t, func(o *Options) { o.DegradedWrites = true })
	ids := c.addDisks("ec", 6)
	c.pool("ec", "ec:4+2", "/ec")
	c.kill(ids[5])
	c.waitDead()

	files := c.putECFiles()
	entry := c.entry
	for p, data := range files {
		e := entry(p)
		if e.Layout.String() != "ec:4+2" || len(e.Replicas) != 5 {
			t.Fatalf("%s: layout %v with %d shard rows, want ec:4+2 with 5", p, e.Layout, len(e.Replicas))
		}
		for i, r := range e.Replicas {
			if r.Shard != i || r.Server == ids[5] {
				t.Fatalf("%s: shard rows %+v, want shards 0-4 on live servers", p, e.Replicas)
			}
		}
		c.mustGet(p, data)
	}
	// One more down (data shard 0's server): 4 shards left, still whole.
	a := entry("/ec/a")
	c.kill(a.Replicas[0].Server)
	c.mustGet("/ec/a", files["/ec/a"])
	c.start(a.Replicas[0].Server)
	c.waitLive(a.Replicas[0].Server)

	var sr wire.ScrubReport
	c.admin(wire.PathAdminScrub, wire.ScrubRequest{}, &sr)
	if sr.Files != 2 || sr.Bad != 2 || len(sr.Problems) != 2 || sr.Problems[0].Shard != 5 || !strings.Contains(sr.Problems[0].Problem, "missing") {
		t.Fatalf("scrub of two degraded files: %+v", sr)
	}

	// Fewer than K+1 = 5 live: even a degraded write is refused.
	c.kill(ids[0])
	c.waitDead()
	if st, body := c.do("PUT", c.pURL, "/ec/c", nil, storetest.Data(3, 100000)); st != 507 || !strings.Contains(string(body), "even degraded") {
		t.Fatalf("PUT with 4 live of ec:4+2: %d %s, want 507", st, body)
	}
	c.start(ids[0])
	c.start(ids[5])
	c.waitLive(ids[0], ids[5])

	var rr wire.RepairReport
	c.admin(wire.PathAdminRepair, struct{}{}, &rr)
	if rr.Files != 2 || rr.Repaired != 2 || rr.Failed != 0 {
		t.Fatalf("repair of two degraded files: %+v", rr)
	}
	for p := range files {
		e := entry(p)
		seen := map[string]bool{}
		for i, r := range e.Replicas {
			if r.Shard != i || seen[r.Server] {
				t.Fatalf("%s after repair: %+v, want 6 shards on 6 servers", p, e.Replicas)
			}
			seen[r.Server] = true
		}
		if len(e.Replicas) != 6 || e.Replicas[5].Server != ids[5] {
			t.Fatalf("%s after repair: %+v, want shard 5 on %s", p, e.Replicas, ids[5])
		}
	}
	c.admin(wire.PathAdminScrub, wire.ScrubRequest{}, &sr)
	if sr.Bad != 0 {
		t.Fatalf("scrub after repair: %+v", sr)
	}
	c.kill(a.Replicas[1].Server, a.Replicas[3].Server)
	for p, data := range files {
		c.mustGet(p, data)
	}
}
