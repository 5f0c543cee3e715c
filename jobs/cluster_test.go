package jobs_test

import (
	"strings"
	"testing"
	"time"

	"shoal/internal/testsystem"
	"shoal/md"
	"shoal/wire"
)

// TestRepairEC42: an ec:4+2 pool of seven real data servers behind md and
// a real gw, the jobs run by the runners beside md. Flipped bytes in a
// shard are read around, reported by scrub and rebuilt in place by
// repair; a dead server's shards are rebuilt onto the seventh (rows
// moved), after which two more may die.
func TestRepairEC42(t *testing.T) {
	c := testsystem.New(t)
	ids := c.AddDisks("ec", 7)
	c.Pool("ec", "ec:4+2", "/ec")
	files := c.PutECFiles()
	a := c.Entry("/ec/a")
	shardOn := func(i int) string { return a.Replicas[i].Server }

	// Bit rot in shard 1: reads are still exact, scrub reports it, repair
	// rebuilds it in place, scrub is then clean.
	testsystem.Flip(t, c.ObjectFile(shardOn(1), a.Replicas[1].Object), 4096)
	c.MustGet("/ec/a", files["/ec/a"])
	var sr wire.ScrubReport
	c.Admin(wire.PathAdminScrub, wire.ScrubRequest{RateMBps: 50}, &sr)
	if sr.Files != 2 || sr.Bad != 1 || len(sr.Problems) != 1 || sr.Problems[0].Server != shardOn(1) || !strings.Contains(sr.Problems[0].Problem, "corrupt") {
		t.Fatalf("scrub: %+v", sr)
	}
	var rr wire.RepairReport
	c.Admin(wire.PathAdminRepair, struct{}{}, &rr)
	if rr.Repaired != 1 || rr.Failed != 0 || rr.Healthy != 1 {
		t.Fatalf("repair of the corrupt shard: %+v", rr)
	}
	c.Admin(wire.PathAdminScrub, wire.ScrubRequest{}, &sr)
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
		for _, r := range c.Entry(p).Replicas {
			if r.Server == dead {
				wantRepaired++
				break
			}
		}
	}
	c.Kill(dead)
	c.WaitDead()
	// The six others must look live to the repair (on a loaded box, under
	// the race detector, a heartbeat may come late: TTL is 1.5 s here).
	var alive []string
	for _, id := range ids {
		if id != dead {
			alive = append(alive, id)
		}
	}
	c.WaitLive(alive...)
	c.Admin(wire.PathAdminRepair, struct{}{}, &rr)
	if rr.Failed != 0 || rr.Repaired != wantRepaired {
		t.Fatalf("repair with %s dead: %+v", dead, rr)
	}
	a = c.Entry("/ec/a")
	for _, r := range a.Replicas {
		if r.Server == dead {
			t.Fatalf("a shard still on the dead server: %+v", a.Replicas)
		}
	}
	c.Kill(shardOn(0), shardOn(4))
	for p, data := range files {
		c.MustGet(p, data)
	}
}

// TestRepairDegradedEC: files written degraded (ec:4+2 on five servers,
// shard 5 left out) are reported by scrub as missing a shard; once a
// sixth server is live, repair adds it there, scrub is clean, and any
// two servers may die.
func TestRepairDegradedEC(t *testing.T) {
	c := testsystem.New(t, func(o *md.Options) { o.DegradedWrites = true })
	ids := c.AddDisks("ec", 6)
	c.Pool("ec", "ec:4+2", "/ec")
	c.Kill(ids[5])
	c.WaitDead()
	files := c.PutECFiles()
	a := c.Entry("/ec/a")
	if len(a.Replicas) != 5 {
		t.Fatalf("degraded write: %+v, want five shards", a.Replicas)
	}
	var sr wire.ScrubReport
	c.Admin(wire.PathAdminScrub, wire.ScrubRequest{}, &sr)
	if sr.Files != 2 || sr.Bad != 2 || len(sr.Problems) != 2 || sr.Problems[0].Shard != 5 || !strings.Contains(sr.Problems[0].Problem, "missing") {
		t.Fatalf("scrub of two degraded files: %+v", sr)
	}

	c.Start(ids[5])
	c.WaitLive(ids[5])

	// The job takes the servers as it finds them when it starts: under
	// load the sixth may not be usable to it yet. Such a repair must say
	// it could not add the shard (it once said "rebuilt in place" into the
	// degraded write's discarding store), and a repair run again adds it.
	var rr wire.RepairReport
	for try := 0; ; try++ {
		rr = wire.RepairReport{}
		c.Admin(wire.PathAdminRepair, struct{}{}, &rr)
		if rr.Files == 2 && rr.Repaired == 2 && rr.Failed == 0 {
			break
		}
		for _, p := range rr.Problems {
			if p.Shard == 5 && !strings.Contains(p.Action, "skipped") && !strings.Contains(p.Action, "failed") {
				t.Fatalf("repair that did not add shard 5 reports: %+v", rr)
			}
		}
		if try == 10 {
			t.Fatalf("repair of two degraded files: %+v", rr)
		}
		time.Sleep(300 * time.Millisecond)
	}
	for p := range files {
		e := c.Entry(p)
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
	c.Admin(wire.PathAdminScrub, wire.ScrubRequest{}, &sr)
	if sr.Bad != 0 {
		t.Fatalf("scrub after repair: %+v", sr)
	}
	c.Kill(a.Replicas[1].Server, a.Replicas[3].Server)
	for p, data := range files {
		c.MustGet(p, data)
	}
}
