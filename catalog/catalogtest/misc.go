package catalogtest

import (
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"shoal"
)

func testCopy(t *testing.T, c shoal.Catalog) {
	mkdir(t, c, "/c")
	src := putObjects(t, c, "/c/src", "a001", 11, "s1", "s2")
	ok(t, c.PatchProps(ctx(t), "/c/src", []shoal.Prop{{Space: "urn:x", Name: "k", Value: "v"}}, nil))
	created := got(c.Copy(ctx(t), "/c/src", "/c/dst", false, grace)).must(t)
	if !created {
		t.Errorf("Copy to a new path: created = false")
	}
	dst := stat(t, c, "/c/dst")
	if dst.ID == src.ID || dst.Size != 11 || len(dst.Replicas) != 2 || dst.Replicas[0].Object != "a001" || dst.Layout != src.Layout {
		t.Errorf("copy = %+v (src %+v)", dst, src)
	}
	if ps := got(c.Props(ctx(t), "/c/dst")).must(t); len(ps) != 1 || ps[0] != (shoal.Prop{Space: "urn:x", Name: "k", Value: "v"}) {
		t.Errorf("copied props = %v", ps)
	}
	stat(t, c, "/c/src")
	_, err := c.Copy(ctx(t), "/c/src", "/c/dst", false, grace)
	wantKind(t, "Copy onto existing without overwrite", err, shoal.KindPrecondition)
	// The objects are shared: removing the copy frees nothing.
	ok(t, c.Remove(ctx(t), "/c/dst", grace))
	if g := garbageObjects(t, c, "s1", later); len(g) != 0 {
		t.Errorf("removing a copy queued shared objects: %v", g)
	}
	// Copy again, overwrite the source: still shared by the copy.
	got(c.Copy(ctx(t), "/c/src", "/c/dst", false, grace)).must(t)
	putInline(t, c, "/c/src", "new")
	if g := garbageObjects(t, c, "s1", later); len(g) != 0 {
		t.Errorf("overwriting a copied source queued shared objects: %v", g)
	}
	// Last reference gone: garbage on both servers.
	ok(t, c.Remove(ctx(t), "/c/dst", grace))
	for _, s := range []string{"s1", "s2"} {
		if g := garbageObjects(t, c, s, later); g["a001"] != 1 {
			t.Errorf("garbage %s = %v, want a001 once", s, g)
		}
	}
	// Overwrite true replaces the destination; created is false.
	putInline(t, c, "/c/a", "A")
	putInline(t, c, "/c/b", "B")
	created = got(c.Copy(ctx(t), "/c/a", "/c/b", true, grace)).must(t)
	if created {
		t.Errorf("Copy over an existing path: created = true")
	}
	if b := stat(t, c, "/c/b"); string(b.Inline) != "A" {
		t.Errorf("/c/b = %q, want A", b.Inline)
	}
}

func testCopyDir(t *testing.T, c shoal.Catalog) {
	mkdir(t, c, "/t", "/t/d", "/t/d/e", "/t/dx")
	putObjects(t, c, "/t/d/e/f", "a101", 3, "s1")
	putInline(t, c, "/t/d/i", "inline")
	putInline(t, c, "/t/dx/other", "o")
	ok(t, c.PatchProps(ctx(t), "/t/d/e", []shoal.Prop{{Space: "DAV:", Name: "p", Value: "1"}}, nil))
	got(c.Copy(ctx(t), "/t/d", "/t/copy", false, grace)).must(t)
	for _, p := range []string{"/t/copy", "/t/copy/e", "/t/copy/e/f", "/t/copy/i", "/t/d/e/f", "/t/d/i"} {
		if e := stat(t, c, p); e.Path != p {
			t.Errorf("Stat(%s).Path = %s", p, e.Path)
		}
	}
	wantMissing(t, c, "/t/copy/other")
	if f := stat(t, c, "/t/copy/e/f"); f.Parent != stat(t, c, "/t/copy/e").ID || len(f.Replicas) != 1 {
		t.Errorf("copied file = %+v", f)
	}
	if ps := got(c.Props(ctx(t), "/t/copy/e")).must(t); len(ps) != 1 {
		t.Errorf("copied dir props = %v", ps)
	}
	if es := got(c.List(ctx(t), "/t/copy")).must(t); !equalStrings(names(es), []string{"e", "i"}) {
		t.Errorf("List(/t/copy) = %v", names(es))
	}
	ok(t, c.Remove(ctx(t), "/t/d", grace))
	if g := garbageObjects(t, c, "s1", later); len(g) != 0 {
		t.Errorf("removing the source of a copied dir queued %v", g)
	}
	stat(t, c, "/t/copy/e/f")
}

func testProps(t *testing.T, c shoal.Catalog) {
	mkdir(t, c, "/pr")
	putInline(t, c, "/pr/f", "x")
	if ps := got(c.Props(ctx(t), "/pr/f")).must(t); len(ps) != 0 {
		t.Errorf("new file props = %v", ps)
	}
	a := shoal.Prop{Space: "urn:a", Name: "one", Value: "<b>1</b>"}
	b := shoal.Prop{Space: "DAV:", Name: "two", Value: "2"}
	ok(t, c.PatchProps(ctx(t), "/pr/f", []shoal.Prop{a, b}, nil))
	ps := got(c.Props(ctx(t), "/pr/f")).must(t)
	if len(ps) != 2 || ps[0] != b || ps[1] != a {
		t.Errorf("Props = %v, want [%v %v] (sorted by space, name)", ps, b, a)
	}
	a2 := shoal.Prop{Space: "urn:a", Name: "one", Value: "changed"}
	ok(t, c.PatchProps(ctx(t), "/pr/f", []shoal.Prop{a2}, []shoal.Prop{b}))
	if ps := got(c.Props(ctx(t), "/pr/f")).must(t); len(ps) != 1 || ps[0] != a2 {
		t.Errorf("after patch Props = %v, want [%v]", ps, a2)
	}
	// All or none: a patch with one bad property changes nothing.
	err := c.PatchProps(ctx(t), "/pr/f", []shoal.Prop{{Space: "urn:a", Name: "three", Value: "3"}, {Space: "urn:a", Name: ""}}, []shoal.Prop{a2})
	wantKind(t, "PatchProps with a nameless property", err, shoal.KindInvalid)
	if ps := got(c.Props(ctx(t), "/pr/f")).must(t); len(ps) != 1 || ps[0] != a2 {
		t.Errorf("after failed patch Props = %v, want [%v]", ps, a2)
	}
	// Directories have properties too, and overwrite keeps them.
	ok(t, c.PatchProps(ctx(t), "/pr", []shoal.Prop{a}, nil))
	if ps := got(c.Props(ctx(t), "/pr")).must(t); len(ps) != 1 {
		t.Errorf("dir props = %v", ps)
	}
	_, err = c.Props(ctx(t), "/pr/missing")
	wantKind(t, "Props missing", err, shoal.KindNotFound)
	wantKind(t, "PatchProps missing", c.PatchProps(ctx(t), "/pr/missing", []shoal.Prop{a}, nil), shoal.KindNotFound)
}

func testServers(t *testing.T, c shoal.Catalog) {
	if ss := got(c.Servers(ctx(t))).must(t); len(ss) != 0 {
		t.Errorf("Servers of a new catalog = %v", ss)
	}
	seen := time.Unix(1_700_000_100, 0)
	s1 := shoal.Server{ID: "disk1", URL: "http://127.0.0.1:1", Pool: "default", State: shoal.ServerActive, Free: 100, Total: 200, LastSeen: seen}
	s2 := shoal.Server{ID: "disk2", URL: "http://127.0.0.1:2", Pool: "ec", State: shoal.ServerActive, Free: 5, Total: 10, LastSeen: seen}
	ok(t, c.PutServer(ctx(t), &s2))
	ok(t, c.PutServer(ctx(t), &s1))
	ss := got(c.Servers(ctx(t))).must(t)
	if len(ss) != 2 || !sameServer(ss[0], s1) || !sameServer(ss[1], s2) {
		t.Fatalf("Servers = %+v, want [%+v %+v]", ss, s1, s2)
	}
	ok(t, c.SetServerState(ctx(t), "disk1", shoal.ServerReadOnly))
	// A heartbeat refreshes space, URL and time but keeps the operator's state.
	hb := s1
	hb.URL, hb.Free, hb.LastSeen = "http://127.0.0.1:3", 50, seen.Add(time.Minute)
	ok(t, c.PutServer(ctx(t), &hb))
	ss = got(c.Servers(ctx(t))).must(t)
	want := hb
	want.State = shoal.ServerReadOnly
	if !sameServer(ss[0], want) {
		t.Errorf("after heartbeat Servers[0] = %+v, want %+v", ss[0], want)
	}
	ok(t, c.SetServerState(ctx(t), "disk2", shoal.ServerRetired))
	if ss := got(c.Servers(ctx(t))).must(t); len(ss) != 2 || ss[1].State != shoal.ServerRetired {
		t.Errorf("retired server not listed: %+v", ss)
	}
	wantKind(t, "SetServerState unknown", c.SetServerState(ctx(t), "nope", shoal.ServerActive), shoal.KindNotFound)
}

func sameServer(a, b shoal.Server) bool {
	return a.ID == b.ID && a.URL == b.URL && a.Pool == b.Pool && a.State == b.State &&
		a.Free == b.Free && a.Total == b.Total && a.LastSeen.Equal(b.LastSeen)
}

func testGarbage(t *testing.T, c shoal.Catalog) {
	mkdir(t, c, "/g")
	soon := time.Unix(1_750_000_000, 0)
	for i := 0; i < 5; i++ {
		obj := fmt.Sprintf("9a%02d", i)
		putObjects(t, c, "/g/"+obj, obj, 1, "s1", "s2")
		g := grace
		if i < 3 {
			g = soon
		}
		ok(t, c.Remove(ctx(t), "/g/"+obj, g))
	}
	if gs := got(c.Garbage(ctx(t), "s1", soon.Add(-time.Second), 100)).must(t); len(gs) != 0 {
		t.Errorf("garbage due before anything = %v", gs)
	}
	gs := got(c.Garbage(ctx(t), "s1", soon, 100)).must(t)
	if len(gs) != 3 {
		t.Fatalf("garbage due at soon = %d items, want 3", len(gs))
	}
	if lim := got(c.Garbage(ctx(t), "s1", later, 2)).must(t); len(lim) != 2 {
		t.Errorf("limit 2 returned %d items", len(lim))
	}
	ids := []int64{gs[0].ID, gs[1].ID}
	ok(t, c.DropGarbage(ctx(t), ids))
	left := got(c.Garbage(ctx(t), "s1", later, 100)).must(t)
	if len(left) != 3 {
		t.Errorf("after dropping 2 of 5, %d left", len(left))
	}
	for _, g := range left {
		if g.ID == ids[0] || g.ID == ids[1] {
			t.Errorf("dropped item %d still queued", g.ID)
		}
	}
	if g2 := got(c.Garbage(ctx(t), "s2", later, 100)).must(t); len(g2) != 5 {
		t.Errorf("s2 garbage = %d items, want 5 (drops on s1 must not touch s2)", len(g2))
	}
	ok(t, c.DropGarbage(ctx(t), ids)) // idempotent
	ok(t, c.DropGarbage(ctx(t), nil))
}

func testWalkReplicas(t *testing.T, c shoal.Catalog) {
	mkdir(t, c, "/w", "/w/d")
	putObjects(t, c, "/w/a", "7a01", 1, "s1", "s2")
	putObjects(t, c, "/w/d/b", "7a02", 2, "s1")
	putObjects(t, c, "/w/c", "7a03", 3, "s2")
	got(c.Copy(ctx(t), "/w/a", "/w/a2", false, grace)).must(t)
	ok(t, c.BeginUpload(ctx(t), &shoal.Upload{ID: "77", Path: "/w/pending", Servers: []string{"s1"}, Object: "7a04",
		Layout: shoal.DefaultLayout, Expires: time.Now().Add(time.Hour)}))
	var got []string
	ok(t, c.WalkReplicas(ctx(t), "s1", func(path string, r shoal.Replica) error {
		if r.Server != "s1" {
			t.Errorf("walk of s1 got replica on %s", r.Server)
		}
		got = append(got, path+"="+r.Object)
		return nil
	}))
	sort.Strings(got)
	want := []string{"/w/a2=7a01", "/w/a=7a01", "/w/d/b=7a02", "=7a04"}
	if !equalStrings(got, want) {
		t.Errorf("WalkReplicas(s1) = %v, want %v", got, want)
	}
	stop := fmt.Errorf("stop")
	n := 0
	err := c.WalkReplicas(ctx(t), "s1", func(string, shoal.Replica) error { n++; return stop })
	if err != stop || n != 1 {
		t.Errorf("WalkReplicas with fn failing: err %v after %d calls, want fn's error after 1", err, n)
	}

	// NamedObjects: replicas on that server only, each once, a pending
	// upload's object not; more objects than one query takes.
	ask := []string{"7a01", "7a02", "7a03", "7a04", "7a05"}
	for i := range 1200 {
		ask = append(ask, fmt.Sprintf("ff%04x", i))
	}
	named, err := c.NamedObjects(ctx(t), "s1", ask)
	ok(t, err)
	sort.Strings(named)
	if want := []string{"7a01", "7a02"}; !equalStrings(named, want) {
		t.Errorf("NamedObjects(s1) = %v, want %v", named, want)
	}
	named, err = c.NamedObjects(ctx(t), "s2", []string{"7a03", "7a02"})
	ok(t, err)
	if want := []string{"7a03"}; !equalStrings(named, want) {
		t.Errorf("NamedObjects(s2) = %v, want %v", named, want)
	}
	if named, err := c.NamedObjects(ctx(t), "s1", nil); err != nil || len(named) != 0 {
		t.Errorf("NamedObjects of none = %v, %v", named, err)
	}
}

func testUsage(t *testing.T, c shoal.Catalog) {
	mkdir(t, c, "/q", "/q/a", "/q/a/b", "/qq")
	putObjects(t, c, "/q/a/b/f", "5a01", 1000, "s1")
	putInline(t, c, "/q/a/g", "12345")
	putInline(t, c, "/q/h", "1")
	putInline(t, c, "/qq/x", "not counted in /q")
	check := func(p string, wantBytes, wantFiles int64) {
		t.Helper()
		b, f, err := c.Usage(ctx(t), p)
		if err != nil || b != wantBytes || f != wantFiles {
			t.Errorf("Usage(%s) = %d bytes, %d files, %v; want %d, %d", p, b, f, err, wantBytes, wantFiles)
		}
	}
	check("/q", 1006, 3)
	check("/q/a", 1005, 2)
	check("/q/a/g", 5, 1)
	check("/", 1006+17, 4)
	_, _, err := c.Usage(ctx(t), "/nope")
	wantKind(t, "Usage missing", err, shoal.KindNotFound)
}

func testConcurrentMkdir(t *testing.T, c shoal.Catalog) {
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { _, errs[i] = c.Mkdir(ctx(t), "/race", t0) })
	}
	wg.Wait()
	wins := 0
	for _, err := range errs {
		if err == nil {
			wins++
			continue
		}
		wantKind(t, "losing Mkdir", err, shoal.KindExist)
	}
	if wins != 1 {
		t.Errorf("%d concurrent Mkdirs succeeded, want exactly 1", wins)
	}
	if es := got(c.List(ctx(t), "/")).must(t); len(es) != 1 {
		t.Errorf("List(/) = %v, want one /race", names(es))
	}
}

func testConcurrentCreateOnly(t *testing.T, c shoal.Catalog) {
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, errs[i] = c.PutInline(ctx(t), "/only", []byte{byte('a' + i)}, shoal.Sums{}, t0, shoal.Condition{CreateOnly: true}, grace)
		})
	}
	wg.Wait()
	wins := 0
	for _, err := range errs {
		if err == nil {
			wins++
			continue
		}
		wantKind(t, "losing createOnly PutInline", err, shoal.KindPrecondition)
	}
	if wins != 1 {
		t.Errorf("%d concurrent createOnly puts succeeded, want exactly 1", wins)
	}
	// Concurrent plain puts all succeed: each replaces the last.
	for i := range n {
		wg.Go(func() {
			_, errs[i] = c.PutInline(ctx(t), "/many", []byte{byte('a' + i)}, shoal.Sums{}, t0, shoal.Condition{}, grace)
		})
	}
	wg.Wait()
	for _, err := range errs {
		ok(t, err)
	}
	if e := stat(t, c, "/many"); e.Version != n {
		t.Errorf("after %d puts Version = %d, want %d", n, e.Version, n)
	}
}

func testConcurrentFinish(t *testing.T, c shoal.Catalog) {
	mkdir(t, c, "/cf")
	ok(t, c.BeginUpload(ctx(t), &shoal.Upload{ID: "cf01", Path: "/cf/f", Servers: []string{"s1"}, Object: "cf01",
		Layout: shoal.DefaultLayout, Expires: time.Now().Add(time.Hour)}))
	const n = 4
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, errs[i] = c.FinishUpload(ctx(t), &shoal.Commit{Upload: "cf01", Size: 1, MTime: t0,
				Replicas: []shoal.Replica{{Server: "s1", Object: "cf01", Size: 1}}}, grace)
		})
	}
	wg.Wait()
	wins := 0
	for _, err := range errs {
		if err == nil {
			wins++
			continue
		}
		wantKind(t, "losing FinishUpload", err, shoal.KindNotFound)
	}
	if wins != 1 {
		t.Errorf("%d concurrent FinishUploads of one upload succeeded, want exactly 1", wins)
	}
	if e := stat(t, c, "/cf/f"); len(e.Replicas) != 1 || e.Replicas[0].Object != "cf01" {
		t.Errorf("entry = %+v", e)
	}
	if g := garbageObjects(t, c, "s1", later); len(g) != 0 {
		t.Errorf("a double finish queued the live object as garbage: %v", g)
	}
}
