package catalogtest

import (
	"testing"

	"shoal"
)

// testPools: the default pool, layouts, inheritance from the nearest
// mapped ancestor, the mapping following a moved directory, and files
// keeping the layout they were written with.
func testPools(t *testing.T, c shoal.Catalog) {
	ps := c
	def := got(ps.PoolFor(ctx(t), "/x")).must(t)
	if def.Name != shoal.DefaultPool || def.Layout != shoal.DefaultLayout {
		t.Fatalf("PoolFor on a new catalog = %+v, want default replica:1", def)
	}
	ec42 := shoal.Layout{Kind: shoal.LayoutEC, K: 4, M: 2}
	r2 := shoal.Layout{Kind: shoal.LayoutReplica, N: 2}
	ok(t, ps.PutPool(ctx(t), shoal.Pool{Name: "ec", Layout: ec42}))
	ok(t, ps.PutPool(ctx(t), shoal.Pool{Name: "r2", Layout: shoal.DefaultLayout}))
	ok(t, ps.PutPool(ctx(t), shoal.Pool{Name: "r2", Layout: r2})) // update
	ok(t, ps.PutPool(ctx(t), shoal.Pool{Name: "r2", Layout: r2})) // same again
	wantKind(t, "PutPool without layout", ps.PutPool(ctx(t), shoal.Pool{Name: "z"}), shoal.KindInvalid)
	for _, bad := range []string{"", "bad name", "a/b", "..", shoal.GatewayPool} {
		wantKind(t, "PutPool named "+bad, ps.PutPool(ctx(t), shoal.Pool{Name: bad, Layout: shoal.DefaultLayout}), shoal.KindInvalid)
	}
	pools := got(ps.Pools(ctx(t))).must(t)
	want := []shoal.Pool{{Name: "default", Layout: shoal.DefaultLayout}, {Name: "ec", Layout: ec42}, {Name: "r2", Layout: r2}}
	if len(pools) != len(want) {
		t.Fatalf("Pools = %+v, want %+v", pools, want)
	}
	for i := range want {
		if pools[i] != want[i] {
			t.Errorf("Pools[%d] = %+v, want %+v", i, pools[i], want[i])
		}
	}

	mkdir(t, c, "/a", "/a/b", "/a/b/c", "/d")
	ok(t, ps.SetDirPool(ctx(t), "/a", "ec"))
	ok(t, ps.SetDirPool(ctx(t), "/a/b/c", "r2"))
	for path, pool := range map[string]string{"/a/f": "ec", "/a/b": "ec", "/a/b/f": "ec", "/a/b/c/f": "r2", "/a/b/c": "r2", "/d/f": "default", "/f": "default"} {
		if p := got(ps.PoolFor(ctx(t), path)).must(t); p.Name != pool {
			t.Errorf("PoolFor(%s) = %s, want %s", path, p.Name, pool)
		}
	}
	if p := got(ps.PoolFor(ctx(t), "/a/x")).must(t); p.Layout != ec42 {
		t.Errorf("PoolFor(/a/x).Layout = %v, want %v", p.Layout, ec42)
	}
	wantKind(t, "SetDirPool unknown pool", ps.SetDirPool(ctx(t), "/d", "nope"), shoal.KindNotFound)
	wantKind(t, "SetDirPool missing dir", ps.SetDirPool(ctx(t), "/nope", "ec"), shoal.KindNotFound)
	putInline(t, c, "/d/file", "x")
	wantKind(t, "SetDirPool on a file", ps.SetDirPool(ctx(t), "/d/file", "ec"), shoal.KindNotDir)

	// The mapping follows a moved directory.
	got(c.Move(ctx(t), "/a/b", "/d/b", false, grace)).must(t)
	if p := got(ps.PoolFor(ctx(t), "/d/b/c/f")).must(t); p.Name != "r2" {
		t.Errorf("after MOVE PoolFor(/d/b/c/f) = %s, want r2", p.Name)
	}
	if p := got(ps.PoolFor(ctx(t), "/d/b/f")).must(t); p.Name != "default" {
		t.Errorf("after MOVE PoolFor(/d/b/f) = %s, want default (the ec mapping stayed on /a)", p.Name)
	}

	// The default pool's layout can change; files keep theirs.
	e := putObjects(t, c, "/d/old", "0a01", 10, "s1")
	ok(t, ps.PutPool(ctx(t), shoal.Pool{Name: shoal.DefaultPool, Layout: r2}))
	if p := got(ps.PoolFor(ctx(t), "/f")).must(t); p.Layout != r2 {
		t.Errorf("default pool layout = %v after PutPool, want replica:2", p.Layout)
	}
	if got := stat(t, c, "/d/old"); got.Layout != e.Layout || got.Layout != shoal.DefaultLayout {
		t.Errorf("file layout = %v, want replica:1 as written", got.Layout)
	}
	up := &shoal.Upload{ID: hexID(int(uploadSeq.Add(1))), Path: "/a/ec", Servers: []string{"s0", "s1", "s2", "s3", "s4", "s5"},
		Object: "0a02", Layout: ec42, Expires: later}
	ok(t, c.BeginUpload(ctx(t), up))
	var reps []shoal.Replica
	for i, s := range up.Servers {
		reps = append(reps, shoal.Replica{Server: s, Object: "0a02", Shard: i, Size: 100, Sum: uint32(i)})
	}
	got(c.FinishUpload(ctx(t), &shoal.Commit{Upload: up.ID, Size: 300, MTime: t0, Replicas: reps}, grace)).must(t)
	ee := stat(t, c, "/a/ec")
	if ee.Layout != ec42 || len(ee.Replicas) != 6 {
		t.Fatalf("EC file: layout %v, %d replicas", ee.Layout, len(ee.Replicas))
	}
	for i, r := range ee.Replicas {
		if r.Shard != i || r.Server != up.Servers[i] {
			t.Errorf("replica %d = %+v, want shard %d on %s", i, r, i, up.Servers[i])
		}
	}
}

// testReplaceReplica: repair and drain point one replica row elsewhere;
// the old object becomes garbage unless still shared; a row that is gone
// is KindNotFound.
func testReplaceReplica(t *testing.T, c shoal.Catalog) {
	rr := c
	putObjects(t, c, "/f", "0b01", 10, "s1", "s2")
	got(c.Copy(ctx(t), "/f", "/g", false, grace)).must(t) // /g shares s1/0b01 and s2/0b01
	old := shoal.Replica{Server: "s1", Object: "0b01", Size: 10, Sum: 7}
	nw := shoal.Replica{Server: "s3", Object: "0b02", Size: 10, Sum: 7}
	ok(t, rr.ReplaceReplica(ctx(t), "/f", old, nw, grace))
	e := stat(t, c, "/f")
	servers := map[string]string{}
	for _, r := range e.Replicas {
		servers[r.Server] = r.Object
	}
	if len(e.Replicas) != 2 || servers["s3"] != "0b02" || servers["s2"] != "0b01" {
		t.Fatalf("after ReplaceReplica: %+v", e.Replicas)
	}
	if g := garbageObjects(t, c, "s1", later); g["0b01"] != 0 {
		t.Errorf("s1/0b01 still used by /g but queued as garbage")
	}
	ok(t, rr.ReplaceReplica(ctx(t), "/g", old, shoal.Replica{Server: "s4", Object: "0b03", Size: 10}, grace))
	if g := garbageObjects(t, c, "s1", later); g["0b01"] != 1 {
		t.Errorf("s1/0b01 unreferenced but not queued: %v", g)
	}
	wantKind(t, "ReplaceReplica of a gone row", rr.ReplaceReplica(ctx(t), "/f", old, nw, grace), shoal.KindNotFound)
	wantKind(t, "ReplaceReplica of a missing file", rr.ReplaceReplica(ctx(t), "/nope", old, nw, grace), shoal.KindNotFound)

	// A shard a degraded write left out (no row, no Server in old) is
	// added; a shard that has a row cannot be added again.
	putObjects(t, c, "/h", "0c01", 10, "s1", "s2")
	added := shoal.Replica{Server: "s5", Object: "0c01", Shard: 2, Size: 4, Sum: 9}
	ok(t, rr.ReplaceReplica(ctx(t), "/h", shoal.Replica{Shard: 2}, added, grace))
	if e := stat(t, c, "/h"); len(e.Replicas) != 3 || e.Replicas[2] != added {
		t.Errorf("after adding shard 2: %+v", e.Replicas)
	}
	wantKind(t, "adding a shard that has a row", rr.ReplaceReplica(ctx(t), "/h", shoal.Replica{Shard: 2}, added, grace), shoal.KindExist)
}
