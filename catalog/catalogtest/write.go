package catalogtest

import (
	"bytes"
	"testing"
	"time"

	"shoal"
)

func testPutInline(t *testing.T, c shoal.Catalog) {
	mkdir(t, c, "/p")
	md5 := bytes.Repeat([]byte{1}, 16)
	sha := bytes.Repeat([]byte{2}, 32)
	sums := shoal.Sums{Adler32: 0xdeadbeef, MD5: md5, SHA256: sha}
	e1 := got(c.PutInline(ctx(t), "/p/f", []byte("hello"), sums, t0, shoal.Condition{}, grace)).must(t)
	if e1.IsDir || e1.Path != "/p/f" || e1.Size != 5 || string(e1.Inline) != "hello" || !e1.MTime.Equal(t0) ||
		e1.Sums.Adler32 != 0xdeadbeef || !bytes.Equal(e1.Sums.MD5, md5) || !bytes.Equal(e1.Sums.SHA256, sha) {
		t.Errorf("PutInline = %+v", e1)
	}
	if s := stat(t, c, "/p/f"); s.ID != e1.ID || s.Version != e1.Version || string(s.Inline) != "hello" || len(s.Replicas) != 0 {
		t.Errorf("Stat after PutInline = %+v, want %+v", s, e1)
	}
	t1 := t0.Add(time.Minute)
	e2 := got(c.PutInline(ctx(t), "/p/f", []byte("world!"), shoal.Sums{Adler32: 1}, t1, shoal.Condition{}, grace)).must(t)
	if e2.Version != e1.Version+1 {
		t.Errorf("overwrite Version = %d, want %d", e2.Version, e1.Version+1)
	}
	if e2.ETag() == e1.ETag() {
		t.Errorf("overwrite kept the ETag %s", e1.ETag())
	}
	if e2.Size != 6 || string(e2.Inline) != "world!" || !e2.MTime.Equal(t1) || e2.Sums.MD5 != nil || e2.Sums.SHA256 != nil {
		t.Errorf("overwritten entry = %+v", e2)
	}
	if s := stat(t, c, "/p/f"); s.ETag() != e2.ETag() || string(s.Inline) != "world!" {
		t.Errorf("Stat after overwrite = %+v", s)
	}
	_, err := c.PutInline(ctx(t), "/p/f", []byte("no"), shoal.Sums{}, t0, shoal.Condition{CreateOnly: true}, grace)
	wantKind(t, "createOnly on existing", err, shoal.KindPrecondition)
	if s := stat(t, c, "/p/f"); string(s.Inline) != "world!" {
		t.Errorf("failed createOnly changed the file: %q", s.Inline)
	}
	e3 := got(c.PutInline(ctx(t), "/p/new", []byte("n"), shoal.Sums{}, t0, shoal.Condition{CreateOnly: true}, grace)).must(t)
	if string(e3.Inline) != "n" {
		t.Errorf("createOnly new = %+v", e3)
	}
	// If-Match: the file must exist with one of the listed ETags.
	_, err = c.PutInline(ctx(t), "/p/f", []byte("no"), shoal.Sums{}, t0, shoal.Condition{IfMatch: []string{e1.ETag()}}, grace)
	wantKind(t, "If-Match an older ETag", err, shoal.KindPrecondition)
	_, err = c.PutInline(ctx(t), "/p/none", []byte("no"), shoal.Sums{}, t0, shoal.Condition{IfMatch: []string{"*"}}, grace)
	wantKind(t, "If-Match * on a missing path", err, shoal.KindPrecondition)
	wantMissing(t, c, "/p/none")
	em := got(c.PutInline(ctx(t), "/p/f", []byte("match"), shoal.Sums{}, t0, shoal.Condition{IfMatch: []string{`"x"`, e2.ETag()}}, grace)).must(t)
	got(c.PutInline(ctx(t), "/p/f", []byte("star"), shoal.Sums{}, t0, shoal.Condition{IfMatch: []string{"*"}}, grace)).must(t)
	if em.Version != e2.Version+1 {
		t.Errorf("If-Match overwrite Version = %d, want %d", em.Version, e2.Version+1)
	}
	empty := got(c.PutInline(ctx(t), "/p/empty", nil, shoal.Sums{}, t0, shoal.Condition{}, grace)).must(t)
	if empty.Inline == nil || empty.Size != 0 {
		t.Errorf("empty inline file: Inline = %v (nil means not inline), size %d", empty.Inline, empty.Size)
	}
	if s := stat(t, c, "/p/empty"); s.Inline == nil {
		t.Errorf("Stat of empty inline file: Inline is nil")
	}
	_, err = c.PutInline(ctx(t), "/p", []byte("x"), shoal.Sums{}, t0, shoal.Condition{}, grace)
	wantKind(t, "PutInline on a dir", err, shoal.KindIsDir)
	_, err = c.PutInline(ctx(t), "/missing/f", []byte("x"), shoal.Sums{}, t0, shoal.Condition{}, grace)
	wantKind(t, "PutInline into a missing parent", err, shoal.KindConflict)

	// Overwriting a file that has objects with an inline one frees them.
	putObjects(t, c, "/p/obj", "e001", 100, "s1")
	e4 := putInline(t, c, "/p/obj", "small")
	if len(e4.Replicas) != 0 || string(e4.Inline) != "small" || e4.Layout != (shoal.Layout{}) {
		t.Errorf("inline over uploaded file = %+v", e4)
	}
	if g := garbageObjects(t, c, "s1", later); g["e001"] != 1 {
		t.Errorf("garbage = %v, want e001", g)
	}
}

func testUpload(t *testing.T, c shoal.Catalog) {
	mkdir(t, c, "/u")
	u := &shoal.Upload{ID: "0a01", Path: "/u/f", Servers: []string{"s1", "s2"}, Object: "f001",
		Layout: shoal.Layout{Kind: shoal.LayoutReplica, N: 2}, Expires: time.Now().Add(time.Hour)}
	ok(t, c.BeginUpload(ctx(t), u))
	wantMissing(t, c, "/u/f") // complete or invisible
	wantKind(t, "BeginUpload same ID", c.BeginUpload(ctx(t), u), shoal.KindExist)
	md5 := bytes.Repeat([]byte{9}, 16)
	commit := &shoal.Commit{Upload: "0a01", Size: 1234, Sums: shoal.Sums{Adler32: 42, MD5: md5}, MTime: t0,
		Replicas: []shoal.Replica{{Server: "s1", Object: "f001", Size: 1234, Sum: 42}, {Server: "s2", Object: "f001", Size: 1234, Sum: 42}}}
	e := got(c.FinishUpload(ctx(t), commit, grace)).must(t)
	if e.Path != "/u/f" || e.Size != 1234 || e.Inline != nil || e.Layout != u.Layout || len(e.Replicas) != 2 ||
		e.Sums.Adler32 != 42 || !bytes.Equal(e.Sums.MD5, md5) || !e.MTime.Equal(t0) {
		t.Errorf("FinishUpload = %+v", e)
	}
	s := stat(t, c, "/u/f")
	if len(s.Replicas) != 2 || s.Replicas[0] != commit.Replicas[0] && s.Replicas[0] != commit.Replicas[1] || s.Layout != u.Layout {
		t.Errorf("Stat after upload = %+v", s)
	}
	_, err := c.FinishUpload(ctx(t), commit, grace)
	wantKind(t, "FinishUpload twice", err, shoal.KindNotFound)

	// Replace through a second upload: the first objects become garbage.
	ok(t, c.BeginUpload(ctx(t), &shoal.Upload{ID: "0a02", Path: "/u/f", Servers: []string{"s1"}, Object: "f002",
		Layout: shoal.DefaultLayout, Expires: time.Now().Add(time.Hour)}))
	e2 := got(c.FinishUpload(ctx(t), &shoal.Commit{Upload: "0a02", Size: 1, Sums: shoal.Sums{Adler32: 1}, MTime: t0,
		Replicas: []shoal.Replica{{Server: "s1", Object: "f002", Size: 1}}}, grace)).must(t)
	if e2.Version != e.Version+1 || e2.ETag() == e.ETag() || len(e2.Replicas) != 1 || e2.Replicas[0].Object != "f002" {
		t.Errorf("replacing upload = %+v (was %+v)", e2, e)
	}
	if g := garbageObjects(t, c, "s1", later); g["f001"] != 1 || g["f002"] != 0 {
		t.Errorf("garbage s1 = %v, want f001", g)
	}
	if g := garbageObjects(t, c, "s2", later); g["f001"] != 1 {
		t.Errorf("garbage s2 = %v, want f001", g)
	}
	gs := got(c.Garbage(ctx(t), "s1", later, 10)).must(t)
	if len(gs) != 1 || !gs[0].NotBefore.Equal(grace) {
		t.Errorf("garbage item = %+v, want NotBefore %v", gs, grace)
	}
}

func testUploadErrors(t *testing.T, c shoal.Catalog) {
	mkdir(t, c, "/u", "/u/dir")
	putInline(t, c, "/u/exists", "x")
	_, err := c.FinishUpload(ctx(t), &shoal.Commit{Upload: "ffff", Size: 1}, grace)
	wantKind(t, "FinishUpload unknown", err, shoal.KindNotFound)

	begin := func(id, path string, createOnly bool, expires time.Time) {
		t.Helper()
		ok(t, c.BeginUpload(ctx(t), &shoal.Upload{ID: id, Path: path, Servers: []string{"s1"}, Object: "0b" + id,
			Layout: shoal.DefaultLayout, Cond: shoal.Condition{CreateOnly: createOnly}, Expires: expires}))
	}
	finish := func(id string) error {
		_, err := c.FinishUpload(ctx(t), &shoal.Commit{Upload: id, Size: 1, MTime: t0,
			Replicas: []shoal.Replica{{Server: "s1", Object: "0b" + id, Size: 1}}}, grace)
		return err
	}
	hour := time.Now().Add(time.Hour)
	begin("01", "/u/x", false, time.Now().Add(-time.Second))
	wantKind(t, "FinishUpload expired", finish("01"), shoal.KindNotFound)
	wantMissing(t, c, "/u/x")
	// What the commit refuses, the reservation refuses first, and
	// records nothing then.
	refused := func(what, id, path string, cond shoal.Condition, kind shoal.Kind) {
		t.Helper()
		err := c.BeginUpload(ctx(t), &shoal.Upload{ID: id, Path: path, Servers: []string{"s1"}, Object: "0b" + id,
			Layout: shoal.DefaultLayout, Cond: cond, Expires: hour})
		wantKind(t, "BeginUpload "+what, err, kind)
		wantKind(t, "FinishUpload of a refused reservation ("+what+")", finish(id), shoal.KindNotFound)
	}
	cur := stat(t, c, "/u/exists").ETag()
	putInline(t, c, "/u/file", "f")
	refused("createOnly on existing", "r1", "/u/exists", shoal.Condition{CreateOnly: true}, shoal.KindPrecondition)
	refused("If-Match stale", "r2", "/u/exists", shoal.Condition{IfMatch: []string{`"stale"`, `"other"`}}, shoal.KindPrecondition)
	refused("If-Match on nothing", "r3", "/u/none", shoal.Condition{IfMatch: []string{"*"}}, shoal.KindPrecondition)
	refused("onto a dir", "r4", "/u/dir", shoal.Condition{}, shoal.KindIsDir)
	refused("into a missing parent", "r5", "/u/missing/f", shoal.Condition{}, shoal.KindConflict)
	refused("under a file", "r6", "/u/file/f", shoal.Condition{}, shoal.KindNotDir)
	refused("the root", "r7", "/", shoal.Condition{}, shoal.KindIsDir)
	if s := stat(t, c, "/u/exists"); string(s.Inline) != "x" || s.ETag() != cur {
		t.Errorf("refused reservations changed the file")
	}

	// The commit checks all of it again: the namespace may have changed
	// since the reservation.
	begin("02", "/u/later", true, hour)
	putInline(t, c, "/u/later", "y")
	wantKind(t, "FinishUpload createOnly, created meanwhile", finish("02"), shoal.KindPrecondition)
	if s := stat(t, c, "/u/later"); string(s.Inline) != "y" {
		t.Errorf("failed commit changed the file")
	}
	// If-Match is kept with the upload and checked at commit.
	ok(t, c.BeginUpload(ctx(t), &shoal.Upload{ID: "a5", Path: "/u/exists", Servers: []string{"s1"}, Object: "0ba5",
		Layout: shoal.DefaultLayout, Cond: shoal.Condition{IfMatch: []string{cur}}, Expires: hour}))
	putInline(t, c, "/u/exists", "z")
	wantKind(t, "FinishUpload If-Match, changed meanwhile", finish("a5"), shoal.KindPrecondition)
	cur = stat(t, c, "/u/exists").ETag()
	ok(t, c.BeginUpload(ctx(t), &shoal.Upload{ID: "a6", Path: "/u/exists", Servers: []string{"s1"}, Object: "0ba6",
		Layout: shoal.DefaultLayout, Cond: shoal.Condition{IfMatch: []string{`"stale"`, cur}}, Expires: hour}))
	ok(t, finish("a6"))
	begin("03", "/u/dir2", false, hour)
	mkdir(t, c, "/u/dir2")
	wantKind(t, "FinishUpload onto a dir made meanwhile", finish("03"), shoal.KindIsDir)
	mkdir(t, c, "/u/gone")
	begin("04", "/u/gone/f", false, hour)
	ok(t, c.Remove(ctx(t), "/u/gone", grace))
	wantKind(t, "FinishUpload into a parent removed meanwhile", finish("04"), shoal.KindConflict)
	begin("05", "/u/new", true, hour)
	ok(t, finish("05"))
	stat(t, c, "/u/new")
}

func testExpireUploads(t *testing.T, c shoal.Catalog) {
	mkdir(t, c, "/x")
	now := time.Now()
	for i, exp := range []time.Time{now.Add(-time.Minute), now.Add(-time.Second), now.Add(time.Hour)} {
		id := []string{"e1", "e2", "e3"}[i]
		ok(t, c.BeginUpload(ctx(t), &shoal.Upload{ID: id, Path: "/x/" + id, Servers: []string{"s1", "s2"}, Object: "0c" + id,
			Layout: shoal.Layout{Kind: shoal.LayoutReplica, N: 2}, Expires: exp}))
	}
	n := got(c.ExpireUploads(ctx(t), now)).must(t)
	if n != 2 {
		t.Errorf("ExpireUploads = %d, want 2", n)
	}
	for _, s := range []string{"s1", "s2"} {
		if g := garbageObjects(t, c, s, later); g["0ce1"] != 1 || g["0ce2"] != 1 || g["0ce3"] != 0 {
			t.Errorf("garbage %s = %v, want 0ce1 and 0ce2", s, g)
		}
	}
	if n := got(c.ExpireUploads(ctx(t), now)).must(t); n != 0 {
		t.Errorf("second ExpireUploads = %d, want 0", n)
	}
	_, err := c.FinishUpload(ctx(t), &shoal.Commit{Upload: "e1", Size: 1, MTime: t0}, grace)
	wantKind(t, "FinishUpload of an expired upload", err, shoal.KindNotFound)
	got(c.FinishUpload(ctx(t), &shoal.Commit{Upload: "e3", Size: 1, MTime: t0,
		Replicas: []shoal.Replica{{Server: "s1", Object: "0ce3", Size: 1}, {Server: "s2", Object: "0ce3", Size: 1}}}, grace)).must(t)
}

// testPendingUploads: a client's live reservations are bounded; renewal
// keeps a reservation alive past its first expiry, never shortens it, and
// an expired one cannot be renewed.
func testPendingUploads(t *testing.T, c shoal.Catalog) {
	mkdir(t, c, "/q")
	now := time.Now()
	begin := func(id, client string, expires time.Time) error {
		return c.BeginUpload(ctx(t), &shoal.Upload{ID: id, Path: "/q/" + id, Servers: []string{"s1"}, Object: "0c" + id,
			Layout: shoal.DefaultLayout, Client: client, MaxPending: 2, Expires: expires})
	}
	ok(t, begin("01", "ip:1", now.Add(time.Minute)))
	ok(t, begin("02", "ip:1", now.Add(time.Minute)))
	wantKind(t, "third pending upload of one client", begin("03", "ip:1", now.Add(time.Minute)), shoal.KindTooMany)
	ok(t, begin("04", "ip:2", now.Add(time.Minute)))
	ok(t, begin("05", "ip:3", now.Add(-time.Second))) // already expired

	// 01 renewed for an hour, 02 not; 05 has expired and nobody renews it.
	ok(t, c.RenewUploads(ctx(t), []string{"01", "zz"}, now.Add(time.Hour)))
	ok(t, c.RenewUploads(ctx(t), []string{"01"}, now.Add(time.Second))) // never earlier
	if n := got(c.ExpireUploads(ctx(t), now.Add(2*time.Minute))).must(t); n != 3 {
		t.Errorf("ExpireUploads after two minutes expired %d reservations, want 3 (02, 04, 05)", n)
	}
	_, err := c.FinishUpload(ctx(t), &shoal.Commit{Upload: "01", Size: 1, MTime: t0}, grace)
	ok(t, err)
	stat(t, c, "/q/01")
	// The finished upload no longer counts: ip:1 may begin two again.
	ok(t, begin("06", "ip:1", now.Add(time.Minute)))
	ok(t, begin("07", "ip:1", now.Add(time.Minute)))
}
