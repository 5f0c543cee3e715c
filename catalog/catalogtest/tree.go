package catalogtest

import (
	"strings"
	"testing"
	"time"

	"shoal"
)

func testRoot(t *testing.T, c shoal.Catalog) {
	root := stat(t, c, "/")
	if !root.IsDir || root.Path != "/" || root.Name() != "/" {
		t.Errorf("Stat(/) = %+v, want the root directory", root)
	}
	if es := got(c.List(ctx(t), "/")).must(t); len(es) != 0 {
		t.Errorf("List(/) of a new catalog = %v, want empty", names(es))
	}
	_, err := c.Mkdir(ctx(t), "/", t0)
	wantKind(t, "Mkdir /", err, shoal.KindExist)
	wantKind(t, "Remove /", c.Remove(ctx(t), "/", grace), shoal.KindPermission)
	_, err = c.PutInline(ctx(t), "/", []byte("x"), shoal.Sums{}, t0, shoal.Condition{}, grace)
	wantKind(t, "PutInline /", err, shoal.KindIsDir)
}

func testMkdirNested(t *testing.T, c shoal.Catalog) {
	p := ""
	var parent int64 = stat(t, c, "/").ID
	for i := 0; i < 8; i++ {
		p += "/d" + string(rune('0'+i))
		e := got(c.Mkdir(ctx(t), p, t0)).must(t)
		if !e.IsDir || e.Path != p || e.Parent != parent || !e.MTime.Equal(t0) {
			t.Errorf("Mkdir(%s) = %+v, want dir with parent %d, mtime %v", p, e, parent, t0)
		}
		parent = e.ID
	}
	deep := stat(t, c, p)
	if deep.Path != p || !deep.IsDir || deep.ID != parent || !deep.MTime.Equal(t0) {
		t.Errorf("Stat(%s) = %+v", p, deep)
	}
	if es := got(c.List(ctx(t), "/d0")).must(t); !equalStrings(names(es), []string{"d1"}) || es[0].Path != "/d0/d1" {
		t.Errorf("List(/d0) = %v, want [d1]", names(es))
	}
	_, err := c.Mkdir(ctx(t), "/d0/d1", t0)
	wantKind(t, "Mkdir existing dir", err, shoal.KindExist)
	_, err = c.Mkdir(ctx(t), "/nope/x", t0)
	wantKind(t, "Mkdir with missing parent", err, shoal.KindConflict)
	wantMissing(t, c, "/nope", "/nope/x", "/d0/nope/x", "/d0/d1/nope")
	_, err = c.List(ctx(t), "/nope")
	wantKind(t, "List missing", err, shoal.KindNotFound)
}

func testListSorted(t *testing.T, c shoal.Catalog) {
	mkdir(t, c, "/s", "/s/b", "/s/_", "/s/B")
	putInline(t, c, "/s/a", "1")
	putInline(t, c, "/s/a.txt", "22")
	putInline(t, c, "/s/é", "333")
	putObjects(t, c, "/s/z", "aa01", 10, "s1", "s2")
	es := got(c.List(ctx(t), "/s")).must(t)
	want := []string{"B", "_", "a", "a.txt", "b", "z", "é"}
	if !equalStrings(names(es), want) {
		t.Fatalf("List(/s) = %v, want %v (byte order)", names(es), want)
	}
	sdir := stat(t, c, "/s")
	for _, e := range es {
		if e.Parent != sdir.ID || e.Path != "/s/"+e.Name() {
			t.Errorf("child %+v: want parent %d and path /s/%s", e, sdir.ID, e.Name())
		}
	}
	if z := es[5]; len(z.Replicas) != 2 || z.Size != 10 {
		t.Errorf("List entry z = %+v, want size 10 and 2 replicas", z)
	}
	if a := es[3]; string(a.Inline) != "22" || a.Size != 2 || a.IsDir {
		t.Errorf("List entry a.txt = %+v, want inline 22", a)
	}
	// A name that is a prefix of another must not leak into the listing.
	mkdir(t, c, "/s2")
	putInline(t, c, "/s2/x", "")
	if es := got(c.List(ctx(t), "/s/b")).must(t); len(es) != 0 {
		t.Errorf("List(/s/b) = %v, want empty", names(es))
	}
}

func testNotDirParents(t *testing.T, c shoal.Catalog) {
	mkdir(t, c, "/a")
	putInline(t, c, "/a/f", "data")
	_, err := c.Stat(ctx(t), "/a/f/g")
	wantKind(t, "Stat below a file", err, shoal.KindNotDir)
	_, err = c.Stat(ctx(t), "/a/f/g/h/i")
	wantKind(t, "Stat deep below a file", err, shoal.KindNotDir)
	_, err = c.Mkdir(ctx(t), "/a/f/g", t0)
	wantKind(t, "Mkdir below a file", err, shoal.KindNotDir)
	_, err = c.Mkdir(ctx(t), "/a/f", t0)
	wantKind(t, "Mkdir on a file", err, shoal.KindExist)
	_, err = c.List(ctx(t), "/a/f")
	wantKind(t, "List a file", err, shoal.KindNotDir)
	_, err = c.PutInline(ctx(t), "/a/f/g", nil, shoal.Sums{}, t0, shoal.Condition{}, grace)
	wantKind(t, "PutInline below a file", err, shoal.KindNotDir, shoal.KindConflict)
}

func testRemove(t *testing.T, c shoal.Catalog) {
	mkdir(t, c, "/r", "/r/sub", "/r/sub/deeper", "/rr")
	putObjects(t, c, "/r/f1", "b001", 5, "s1")
	putObjects(t, c, "/r/sub/f2", "b002", 6, "s1", "s2")
	putObjects(t, c, "/r/sub/deeper/f3", "b003", 7, "s2")
	putInline(t, c, "/r/sub/i", "inline")
	putObjects(t, c, "/rr/keep", "b004", 8, "s1")
	ok(t, c.PatchProps(ctx(t), "/r/sub/f2", []shoal.Prop{{Space: "DAV:", Name: "x", Value: "1"}}, nil))

	if g := garbageObjects(t, c, "s1", later); len(g) != 0 {
		t.Fatalf("garbage before any removal: %v", g)
	}
	ok(t, c.Remove(ctx(t), "/r/f1", grace))
	wantMissing(t, c, "/r/f1")
	if g := garbageObjects(t, c, "s1", later); g["b001"] != 1 || len(g) != 1 {
		t.Errorf("garbage of s1 after removing /r/f1 = %v, want b001 once", g)
	}
	if g := garbageObjects(t, c, "s1", grace.Add(-time.Second)); len(g) != 0 {
		t.Errorf("garbage due before graceUntil = %v, want none", g)
	}
	ok(t, c.Remove(ctx(t), "/r", grace))
	wantMissing(t, c, "/r", "/r/sub", "/r/sub/f2", "/r/sub/deeper/f3", "/r/sub/i")
	if g := garbageObjects(t, c, "s1", later); g["b002"] != 1 || g["b004"] != 0 {
		t.Errorf("garbage of s1 = %v, want b002 and not b004", g)
	}
	if g := garbageObjects(t, c, "s2", later); g["b002"] != 1 || g["b003"] != 1 || len(g) != 2 {
		t.Errorf("garbage of s2 = %v, want b002 and b003", g)
	}
	stat(t, c, "/rr/keep")
	wantKind(t, "Remove missing", c.Remove(ctx(t), "/r", grace), shoal.KindNotFound)
	// The names are free again.
	mkdir(t, c, "/r", "/r/sub")
	if _, err := c.Props(ctx(t), "/r/sub"); err != nil {
		t.Errorf("Props of a new /r/sub: %v", err)
	}
}

func testMoveFile(t *testing.T, c shoal.Catalog) {
	mkdir(t, c, "/m", "/n")
	src := putObjects(t, c, "/m/f", "c001", 3, "s1")
	ok(t, c.PatchProps(ctx(t), "/m/f", []shoal.Prop{{Space: "urn:x", Name: "color", Value: "red"}}, nil))
	created := got(c.Move(ctx(t), "/m/f", "/n/g", false, grace)).must(t)
	if !created {
		t.Errorf("Move to a new path: created = false")
	}
	wantMissing(t, c, "/m/f")
	g := stat(t, c, "/n/g")
	if g.Path != "/n/g" || g.Size != 3 || len(g.Replicas) != 1 || g.Replicas[0].Object != "c001" || g.Parent != stat(t, c, "/n").ID {
		t.Errorf("moved entry = %+v", g)
	}
	if g.ETag() != src.ETag() {
		t.Errorf("Move changed the ETag: %s → %s", src.ETag(), g.ETag())
	}
	if ps := got(c.Props(ctx(t), "/n/g")).must(t); len(ps) != 1 || ps[0].Value != "red" {
		t.Errorf("props after move = %v", ps)
	}
	// Overwrite false onto an existing file.
	putObjects(t, c, "/m/h", "c002", 4, "s1")
	_, err := c.Move(ctx(t), "/m/h", "/n/g", false, grace)
	wantKind(t, "Move onto existing without overwrite", err, shoal.KindPrecondition)
	stat(t, c, "/m/h")
	// Overwrite true: the old destination's objects become garbage.
	created = got(c.Move(ctx(t), "/m/h", "/n/g", true, grace)).must(t)
	if created {
		t.Errorf("Move over an existing path: created = true")
	}
	if e := stat(t, c, "/n/g"); e.Replicas[0].Object != "c002" {
		t.Errorf("after overwrite /n/g = %+v, want object c002", e)
	}
	if gs := garbageObjects(t, c, "s1", later); gs["c001"] != 1 || gs["c002"] != 0 {
		t.Errorf("garbage = %v, want c001 only", gs)
	}
	// The source name is free again.
	putInline(t, c, "/m/f", "again")
}

func testMoveDir(t *testing.T, c shoal.Catalog) {
	mkdir(t, c, "/a", "/a/b", "/a/b/c", "/ab", "/dst")
	putObjects(t, c, "/a/b/c/f", "d001", 9, "s1")
	putInline(t, c, "/a/top", "t")
	putInline(t, c, "/ab/y", "y")
	putInline(t, c, "/a0", "0")
	ok(t, c.PatchProps(ctx(t), "/a/b", []shoal.Prop{{Space: "DAV:", Name: "p", Value: "v"}}, nil))
	created := got(c.Move(ctx(t), "/a", "/dst/z", false, grace)).must(t)
	if !created {
		t.Errorf("created = false")
	}
	wantMissing(t, c, "/a", "/a/b", "/a/b/c", "/a/b/c/f", "/a/top")
	for _, p := range []string{"/dst/z", "/dst/z/b", "/dst/z/b/c", "/dst/z/b/c/f", "/dst/z/top"} {
		if e := stat(t, c, p); e.Path != p {
			t.Errorf("Stat(%s).Path = %s", p, e.Path)
		}
	}
	if f := stat(t, c, "/dst/z/b/c/f"); len(f.Replicas) != 1 || f.Replicas[0].Object != "d001" || f.Parent != stat(t, c, "/dst/z/b/c").ID {
		t.Errorf("moved file = %+v", f)
	}
	es := got(c.List(ctx(t), "/dst/z/b")).must(t)
	if len(es) != 1 || es[0].Path != "/dst/z/b/c" {
		t.Errorf("List(/dst/z/b) = %v", es)
	}
	if ps := got(c.Props(ctx(t), "/dst/z/b")).must(t); len(ps) != 1 {
		t.Errorf("props did not follow the move: %v", ps)
	}
	// Siblings sharing a name prefix are untouched.
	stat(t, c, "/ab/y")
	stat(t, c, "/a0")
	// Move a directory over an existing one with overwrite.
	mkdir(t, c, "/other", "/other/x")
	putObjects(t, c, "/other/x/old", "d002", 1, "s1")
	created = got(c.Move(ctx(t), "/dst/z", "/other", true, grace)).must(t)
	if created {
		t.Errorf("created = true when overwriting")
	}
	wantMissing(t, c, "/other/x", "/other/x/old", "/dst/z")
	stat(t, c, "/other/b/c/f")
	if gs := garbageObjects(t, c, "s1", later); gs["d002"] != 1 || gs["d001"] != 0 {
		t.Errorf("garbage = %v, want d002 only", gs)
	}
	// Moved back, paths are right again.
	got(c.Move(ctx(t), "/other", "/a", false, grace)).must(t)
	stat(t, c, "/a/b/c/f")
	wantMissing(t, c, "/other/b/c/f")
}

func testMoveErrors(t *testing.T, c shoal.Catalog) {
	mkdir(t, c, "/d", "/d/e")
	putInline(t, c, "/d/f", "x")
	_, err := c.Move(ctx(t), "/nope", "/x", false, grace)
	wantKind(t, "Move missing src", err, shoal.KindNotFound)
	_, err = c.Move(ctx(t), "/d", "/d/e/inside", false, grace)
	wantKind(t, "Move into itself", err, shoal.KindInvalid)
	_, err = c.Move(ctx(t), "/d", "/d", true, grace)
	wantKind(t, "Move onto itself", err, shoal.KindInvalid)
	_, err = c.Move(ctx(t), "/d/f", "/missing/f", false, grace)
	wantKind(t, "Move to a missing parent", err, shoal.KindConflict)
	_, err = c.Copy(ctx(t), "/d", "/d/e/inside", false, grace)
	wantKind(t, "Copy into itself", err, shoal.KindInvalid)
	_, err = c.Copy(ctx(t), "/d/f", "/missing/f", false, grace)
	wantKind(t, "Copy to a missing parent", err, shoal.KindConflict)
	_, err = c.Copy(ctx(t), "/nope", "/x", false, grace)
	wantKind(t, "Copy missing src", err, shoal.KindNotFound)
	// Nothing changed.
	stat(t, c, "/d/e")
	stat(t, c, "/d/f")
	wantMissing(t, c, "/d/e/inside", "/x")
	if !strings.HasPrefix(stat(t, c, "/d/f").Path, "/d/") {
		t.Errorf("source moved")
	}
}
