package md_test

import (
	"strings"
	"testing"

	"shoal/internal/testsystem"
	"shoal/md"
	"shoal/storetest"
)

// TestECDegradedWrite: with md.degraded_writes, an ec:4+2 pool with only
// five live servers takes writes on five (shard 5 left out, no row); the
// files read back, also with one more server down. Fewer than K+1 live:
// still refused (503: the servers are down, not full). (Scrub and repair
// of degraded files: jobs.TestRepairDegradedEC.)
func TestECDegradedWrite(t *testing.T) {
	c := testsystem.New(t, func(o *md.Options) { o.DegradedWrites = true })
	ids := c.AddDisks("ec", 6)
	c.Pool("ec", "ec:4+2", "/ec")
	c.Kill(ids[5])
	c.WaitDead()

	files := c.PutECFiles()
	entry := c.Entry
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
		c.MustGet(p, data)
	}
	// One more down (data shard 0's server): 4 shards left, still whole.
	a := entry("/ec/a")
	c.Kill(a.Replicas[0].Server)
	c.MustGet("/ec/a", files["/ec/a"])
	c.Start(a.Replicas[0].Server)
	c.WaitLive(a.Replicas[0].Server)

	// Fewer than K+1 = 5 live: even a degraded write is refused.
	c.Kill(ids[0])
	c.WaitDead()
	if st, body := c.Do("PUT", c.PURL, "/ec/c", nil, storetest.Data(3, 100000)); st != 503 || !strings.Contains(string(body), "even degraded") {
		t.Fatalf("PUT with 4 live of ec:4+2: %d %s, want 503 (servers down, not full)", st, body)
	}
}
