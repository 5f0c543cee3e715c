package catalogtest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"shoal"
)

// quotaOf reads dir's quota through QuotasFor (nearest first).
func quotaOf(t *testing.T, c shoal.Catalog, dir string) shoal.Quota {
	t.Helper()
	qs := got(c.QuotasFor(ctx(t), dir)).must(t)
	if len(qs) == 0 || qs[0].Dir != dir {
		t.Fatalf("QuotasFor(%s) = %+v, want %s's quota first", dir, qs, dir)
	}
	return qs[0]
}

// walkUsage counts what dir holds by listing it: the sizes of the files
// below it and the number of entries below it.
func walkUsage(t *testing.T, c shoal.Catalog, dir string) (bytes, files int64) {
	t.Helper()
	for _, e := range got(c.List(ctx(t), dir)).must(t) {
		files++
		if e.IsDir {
			b, f := walkUsage(t, c, e.Path)
			bytes, files = bytes+b, files+f
		} else {
			bytes += e.Size
		}
	}
	return bytes, files
}

// wantQuota checks dir's counters against its tree, and its reservations.
func wantQuota(t *testing.T, c shoal.Catalog, what, dir string, reserved int64) {
	t.Helper()
	q := quotaOf(t, c, dir)
	b, f := walkUsage(t, c, dir)
	if q.UsedBytes != b || q.UsedFiles != f || q.Reserved != reserved {
		t.Errorf("%s: quota on %s counts %d bytes, %d entries, %d reserved; the tree holds %d bytes, %d entries; want %d reserved",
			what, dir, q.UsedBytes, q.UsedFiles, q.Reserved, b, f, reserved)
	}
}

func putSized(t *testing.T, c shoal.Catalog, path string, n int) (*shoal.Entry, error) {
	return c.PutInline(ctx(t), path, make([]byte, n), shoal.Sums{}, t0, shoal.Condition{}, grace)
}

// testQuotaSet: a quota set on a directory that holds files counts them
// in the same transaction; bad arguments; listing and removal.
func testQuotaSet(t *testing.T, c shoal.Catalog) {
	mkdir(t, c, "/q", "/q/a", "/other")
	putInline(t, c, "/q/f", "12345")
	putInline(t, c, "/q/a/g", "123")
	putObjects(t, c, "/q/a/big", "e101", 1000, "s1")
	putInline(t, c, "/other/x", "1234567")

	q := got(c.SetQuota(ctx(t), "/q", 10000, 0)).must(t)
	if q.Dir != "/q" || q.Bytes != 10000 || q.UsedBytes != 1008 || q.UsedFiles != 4 || q.Reserved != 0 {
		t.Errorf("SetQuota on a directory holding 1008 bytes in 4 entries = %+v", q)
	}
	wantQuota(t, c, "after SetQuota", "/q", 0)
	_, err := c.SetQuota(ctx(t), "/q/f", 10, 0)
	wantKind(t, "SetQuota on a file", err, shoal.KindNotDir)
	_, err = c.SetQuota(ctx(t), "/nope", 10, 0)
	wantKind(t, "SetQuota on a missing path", err, shoal.KindNotFound)
	_, err = c.SetQuota(ctx(t), "/q", 0, 0)
	wantKind(t, "SetQuota without limits", err, shoal.KindInvalid)
	_, err = c.SetQuota(ctx(t), "/q", -1, 5)
	wantKind(t, "SetQuota with a negative limit", err, shoal.KindInvalid)

	// Changing the limits keeps the counts; a limit under the usage is
	// allowed, and then refuses growth.
	got(c.SetQuota(ctx(t), "/q", 500, 3)).must(t)
	q = quotaOf(t, c, "/q")
	if q.Bytes != 500 || q.Files != 3 || q.UsedBytes != 1008 || q.UsedFiles != 4 {
		t.Errorf("changed quota = %+v", q)
	}
	_, err = putSized(t, c, "/q/new", 1)
	wantKind(t, "PutInline into an over-full quota", err, shoal.KindQuota)
	wantMissing(t, c, "/q/new")

	got(c.SetQuota(ctx(t), "/q/a", 2000, 0)).must(t)
	got(c.SetQuota(ctx(t), "/", 1<<40, 0)).must(t)
	qs := got(c.QuotasFor(ctx(t), "/q/a/g")).must(t)
	if len(qs) != 3 || qs[0].Dir != "/q/a" || qs[1].Dir != "/q" || qs[2].Dir != "/" {
		t.Errorf("QuotasFor(/q/a/g) = %+v, want /q/a, /q, / (nearest first)", qs)
	}
	root := quotaOf(t, c, "/")
	if b, f := walkUsage(t, c, "/"); root.UsedBytes != b || root.UsedFiles != f {
		t.Errorf("root quota = %+v, tree %d bytes %d entries", root, b, f)
	}
	all := got(c.Quotas(ctx(t))).must(t)
	if len(all) != 3 || all[0].Dir != "/" || all[1].Dir != "/q" || all[2].Dir != "/q/a" {
		t.Errorf("Quotas = %+v", all)
	}
	if qs := got(c.QuotasFor(ctx(t), "/other/x")).must(t); len(qs) != 1 || qs[0].Dir != "/" {
		t.Errorf("QuotasFor(/other/x) = %+v, want the root's alone", qs)
	}

	ok(t, c.RemoveQuota(ctx(t), "/q"))
	wantKind(t, "RemoveQuota twice", c.RemoveQuota(ctx(t), "/q"), shoal.KindNotFound)
	wantKind(t, "RemoveQuota of a missing path", c.RemoveQuota(ctx(t), "/nope"), shoal.KindNotFound)
	putInline(t, c, "/q/new", "x") // /q no longer limits
	if qs := got(c.QuotasFor(ctx(t), "/q/new")).must(t); len(qs) != 1 || qs[0].Dir != "/" {
		t.Errorf("QuotasFor after RemoveQuota = %+v", qs)
	}
}

// testQuotaWrites: inline writes, overwrites, directories and the entry
// limit keep the counters exact; a write that does not fit changes
// nothing.
func testQuotaWrites(t *testing.T, c shoal.Catalog) {
	mkdir(t, c, "/q")
	got(c.SetQuota(ctx(t), "/q", 100, 5)).must(t)
	got(putSized(t, c, "/q/a", 60)).must(t)
	_, err := putSized(t, c, "/q/b", 41)
	wantKind(t, "41 bytes into 40 left", err, shoal.KindQuota)
	wantMissing(t, c, "/q/b")
	got(putSized(t, c, "/q/b", 40)).must(t)
	wantQuota(t, c, "full", "/q", 0)

	// Overwrite charges the difference: growing needs room, shrinking never
	// does.
	_, err = putSized(t, c, "/q/a", 61)
	wantKind(t, "overwrite growing past the limit", err, shoal.KindQuota)
	if e := stat(t, c, "/q/a"); e.Size != 60 {
		t.Errorf("refused overwrite left size %d", e.Size)
	}
	got(putSized(t, c, "/q/a", 10)).must(t)
	got(putSized(t, c, "/q/a", 60)).must(t)
	got(c.SetQuota(ctx(t), "/q", 50, 5)).must(t) // now over
	got(putSized(t, c, "/q/a", 20)).must(t)      // shrinking an over-full quota
	got(c.SetQuota(ctx(t), "/q", 100, 5)).must(t)
	wantQuota(t, c, "overwrites", "/q", 0)

	// Entries: files and directories count; the sixth is refused.
	mkdir(t, c, "/q/d")
	got(putSized(t, c, "/q/d/x", 0)).must(t)
	got(putSized(t, c, "/q/d/y", 0)).must(t)
	_, err = c.Mkdir(ctx(t), "/q/d/z", t0)
	wantKind(t, "sixth entry (Mkdir)", err, shoal.KindQuota)
	_, err = putSized(t, c, "/q/z", 0)
	wantKind(t, "sixth entry (PutInline)", err, shoal.KindQuota)
	wantMissing(t, c, "/q/d/z", "/q/z")
	got(putSized(t, c, "/q/d/x", 5)).must(t) // an overwrite adds no entry
	wantQuota(t, c, "entries", "/q", 0)

	// Remove gives back a file's, and a whole directory's, share.
	ok(t, c.Remove(ctx(t), "/q/b", grace))
	wantQuota(t, c, "file removed", "/q", 0)
	ok(t, c.Remove(ctx(t), "/q/d", grace))
	wantQuota(t, c, "directory removed", "/q", 0)
	if q := quotaOf(t, c, "/q"); q.UsedFiles != 1 || q.UsedBytes != 20 {
		t.Errorf("after removals = %+v, want 20 bytes in 1 entry", q)
	}

	// Removing a directory with quotas inside drops them.
	mkdir(t, c, "/q/in", "/q/in/deep")
	got(c.SetQuota(ctx(t), "/q/in/deep", 10, 0)).must(t)
	ok(t, c.Remove(ctx(t), "/q/in", grace))
	if all := got(c.Quotas(ctx(t))).must(t); len(all) != 1 || all[0].Dir != "/q" {
		t.Errorf("Quotas after removing a directory with a quota inside = %+v", all)
	}
	wantQuota(t, c, "quota'd directory removed", "/q", 0)
}

// testQuotaNested: every quota on the path is charged; the tightest
// decides, whichever is nearer.
func testQuotaNested(t *testing.T, c shoal.Catalog) {
	mkdir(t, c, "/o", "/o/i", "/o/j")
	got(c.SetQuota(ctx(t), "/o", 100, 0)).must(t)
	got(c.SetQuota(ctx(t), "/o/i", 1000, 0)).must(t) // looser than its parent
	got(putSized(t, c, "/o/i/a", 90)).must(t)
	_, err := putSized(t, c, "/o/i/b", 20)
	wantKind(t, "fits the inner quota, not the outer", err, shoal.KindQuota)
	_, err = putSized(t, c, "/o/j/b", 20)
	wantKind(t, "beside the inner quota, outer full", err, shoal.KindQuota)
	got(c.SetQuota(ctx(t), "/o/i", 95, 0)).must(t)
	got(c.SetQuota(ctx(t), "/o", 1000, 0)).must(t)
	_, err = putSized(t, c, "/o/i/b", 10)
	wantKind(t, "fits the outer quota, not the inner", err, shoal.KindQuota)
	got(putSized(t, c, "/o/j/b", 10)).must(t)
	wantQuota(t, c, "outer", "/o", 0)
	wantQuota(t, c, "inner", "/o/i", 0)
}

// testQuotaMoveCopy: MOVE out of, into and across quotas, and COPY, keep
// the counters exact; a MOVE or COPY that a quota cannot hold is refused
// whole.
func testQuotaMoveCopy(t *testing.T, c shoal.Catalog) {
	mkdir(t, c, "/a", "/b", "/free", "/free/t", "/a/sub")
	got(c.SetQuota(ctx(t), "/a", 100, 0)).must(t)
	got(c.SetQuota(ctx(t), "/b", 50, 0)).must(t)
	got(putSized(t, c, "/a/f", 30)).must(t)
	got(putSized(t, c, "/a/sub/g", 40)).must(t)
	got(putSized(t, c, "/free/t/h", 45)).must(t)
	check := func(what string) {
		t.Helper()
		wantQuota(t, c, what, "/a", 0)
		wantQuota(t, c, what, "/b", 0)
	}
	check("start")

	got(c.Move(ctx(t), "/a/f", "/b/f", false, grace)).must(t) // across
	check("file moved across")
	got(c.Move(ctx(t), "/b/f", "/free/f", false, grace)).must(t) // out
	check("file moved out")
	_, err := c.Move(ctx(t), "/free/t", "/b/t", false, grace) // 45 fits in 50
	ok(t, err)
	check("directory moved in")
	_, err = c.Move(ctx(t), "/a/sub", "/b/sub", false, grace) // 40 more does not
	wantKind(t, "MOVE into a quota that cannot hold it", err, shoal.KindQuota)
	stat(t, c, "/a/sub/g")
	wantMissing(t, c, "/b/sub")
	check("refused move")
	got(c.Move(ctx(t), "/a/sub", "/a/sub2", false, grace)).must(t) // within
	check("moved within")

	// Overwriting MOVE: the destination's share goes first.
	got(putSized(t, c, "/b/small", 5)).must(t)
	got(putSized(t, c, "/a/small", 3)).must(t)
	got(c.Move(ctx(t), "/a/small", "/b/small", true, grace)).must(t)
	check("overwriting move")

	// COPY charges the destination; a copy that does not fit is refused.
	got(c.Copy(ctx(t), "/free/f", "/a/copy", false, grace)).must(t)
	check("file copied in")
	_, err = c.Copy(ctx(t), "/a/sub2", "/b/sub", false, grace)
	wantKind(t, "COPY into a quota that cannot hold it", err, shoal.KindQuota)
	wantMissing(t, c, "/b/sub")
	_, err = c.Copy(ctx(t), "/a/sub2", "/a/sub3", false, grace) // 70+40 > 100
	wantKind(t, "COPY within a quota that cannot hold the copy", err, shoal.KindQuota)
	wantMissing(t, c, "/a/sub3")
	check("copy within")

	// A directory with a quota keeps it when it moves, and what it holds
	// moves out of the quotas around it.
	mkdir(t, c, "/a/home")
	got(c.SetQuota(ctx(t), "/a/home", 20, 0)).must(t)
	got(putSized(t, c, "/a/home/x", 15)).must(t)
	got(c.Move(ctx(t), "/a/home", "/free/home", false, grace)).must(t)
	check("quota'd directory moved out")
	wantQuota(t, c, "moved quota", "/free/home", 0)
	_, err = putSized(t, c, "/free/home/y", 6)
	wantKind(t, "the moved quota still holds", err, shoal.KindQuota)
}

// testQuotaUploads: a reservation is charged before the data moves,
// moved to used at the commit (the real size, minus the replaced file's),
// given back when the upload expires or its commit is refused; a
// flexible reservation takes what is left.
func testQuotaUploads(t *testing.T, c shoal.Catalog) {
	mkdir(t, c, "/q")
	got(c.SetQuota(ctx(t), "/q", 1000, 0)).must(t)
	hour := time.Now().Add(time.Hour)
	begin := func(id, path string, reserve int64, flexible bool, expires time.Time, cond shoal.Condition) (*shoal.Upload, error) {
		u := &shoal.Upload{ID: id, Path: path, Servers: []string{"s1"}, Object: "0d" + id, Layout: shoal.DefaultLayout,
			Expires: expires, Reserve: reserve, Flexible: flexible, Cond: cond}
		return u, c.BeginUpload(ctx(t), u)
	}
	finish := func(id string, size int64) (*shoal.Entry, error) {
		return c.FinishUpload(ctx(t), &shoal.Commit{Upload: id, Size: size, MTime: t0,
			Replicas: []shoal.Replica{{Server: "s1", Object: "0d" + id, Size: size}}}, grace)
	}
	got(begin("01", "/q/a", 600, false, hour, shoal.Condition{})).must(t)
	wantQuota(t, c, "reserved", "/q", 600)
	_, err := begin("02", "/q/b", 401, false, hour, shoal.Condition{})
	wantKind(t, "reservation over the room left", err, shoal.KindQuota)
	_, err = putSized(t, c, "/q/inline", 401)
	wantKind(t, "inline write over the room the reservation leaves", err, shoal.KindQuota)
	got(begin("02", "/q/b", 400, false, hour, shoal.Condition{})).must(t)
	wantQuota(t, c, "full of reservations", "/q", 1000)

	got(finish("01", 550)).must(t) // smaller than reserved
	wantQuota(t, c, "committed", "/q", 400)
	// A reservation refused (If-None-Match: * and the file exists)
	// charges nothing.
	_, err = begin("03", "/q/a", 10, false, hour, shoal.Condition{CreateOnly: true})
	wantKind(t, "refused reservation", err, shoal.KindPrecondition)
	wantQuota(t, c, "after a refused reservation", "/q", 400)
	// A commit refused (If-None-Match: *, and the file was made since
	// the reservation) gives its reservation back at once.
	got(begin("03", "/q/late", 10, false, hour, shoal.Condition{CreateOnly: true})).must(t)
	wantQuota(t, c, "one more", "/q", 410)
	got(putSized(t, c, "/q/late", 0)).must(t)
	_, err = finish("03", 10)
	wantKind(t, "refused commit", err, shoal.KindPrecondition)
	wantQuota(t, c, "after a refused commit", "/q", 400)
	ok(t, c.Remove(ctx(t), "/q/late", grace))

	// Expiry gives back what an upload held.
	got(begin("04", "/q/c", 40, false, time.Now().Add(-time.Second), shoal.Condition{})).must(t)
	wantQuota(t, c, "expiring", "/q", 440)
	if n := got(c.ExpireUploads(ctx(t), time.Now())).must(t); n != 1 {
		t.Errorf("ExpireUploads = %d, want 1", n)
	}
	wantQuota(t, c, "expired", "/q", 400)

	// Overwrite by upload: the new size minus the old one (550 → 50).
	got(begin("05", "/q/a", 50, false, hour, shoal.Condition{})).must(t)
	got(finish("05", 50)).must(t)
	wantQuota(t, c, "overwritten by upload", "/q", 400)
	got(finish("02", 400)).must(t)
	wantQuota(t, c, "all committed", "/q", 0)

	// A flexible (chunked) reservation takes what is left; none left is
	// KindQuota.
	u := got(begin("06", "/q/d", 1<<30, true, hour, shoal.Condition{})).must(t)
	if u.Reserve != 550 {
		t.Errorf("flexible reservation got %d, want the 550 bytes left", u.Reserve)
	}
	wantQuota(t, c, "flexible", "/q", 550)
	_, err = begin("07", "/q/e", 1<<30, true, hour, shoal.Condition{})
	wantKind(t, "flexible reservation with nothing left", err, shoal.KindQuota)
	got(finish("06", 120)).must(t)
	wantQuota(t, c, "flexible committed", "/q", 0)

	// Outside quotas a flexible reservation takes UnquotedMax (Unbounded
	// or a bound of its own) and charges nothing; 0 keeps Reserve.
	mkdir(t, c, "/free")
	for i, tc := range []struct{ unquoted, want int64 }{{shoal.Unbounded, shoal.Unbounded}, {5000, 5000}, {0, 1 << 30}} {
		id := fmt.Sprintf("2%d", i)
		u := &shoal.Upload{ID: id, Path: "/free/" + id, Servers: []string{"s1"}, Object: "0d" + id, Layout: shoal.DefaultLayout,
			Expires: hour, Reserve: 1 << 30, Flexible: true, UnquotedMax: tc.unquoted}
		ok(t, c.BeginUpload(ctx(t), u))
		if u.Reserve != tc.want {
			t.Errorf("flexible reservation outside quotas with UnquotedMax %d got %d, want %d", tc.unquoted, u.Reserve, tc.want)
		}
		got(finish(id, 7000)).must(t)
	}
	// Inside a quota UnquotedMax changes nothing.
	u = &shoal.Upload{ID: "23", Path: "/q/g", Servers: []string{"s1"}, Object: "0d23", Layout: shoal.DefaultLayout,
		Expires: hour, Reserve: 1 << 30, Flexible: true, UnquotedMax: shoal.Unbounded}
	room := quotaOf(t, c, "/q").Room()
	ok(t, c.BeginUpload(ctx(t), u))
	if u.Reserve != room || room <= 0 {
		t.Errorf("flexible reservation under a quota with UnquotedMax got %d, want the %d bytes left", u.Reserve, room)
	}
	wantQuota(t, c, "flexible, UnquotedMax set", "/q", room)
	ok(t, c.AbortUpload(ctx(t), "23"))
	wantQuota(t, c, "flexible, UnquotedMax set, aborted", "/q", 0)

	// A quota set while an upload is pending: it was not reserved there,
	// so its commit is checked against the quota instead.
	mkdir(t, c, "/late")
	got(begin("08", "/late/f", 500, false, hour, shoal.Condition{})).must(t)
	got(begin("09", "/late/g", 500, false, hour, shoal.Condition{})).must(t)
	got(c.SetQuota(ctx(t), "/late", 600, 0)).must(t)
	got(finish("08", 500)).must(t)
	_, err = finish("09", 500)
	wantKind(t, "commit of an upload made before the quota, over it", err, shoal.KindQuota)
	wantMissing(t, c, "/late/g")
	wantQuota(t, c, "late quota", "/late", 0)

	// A recount (SetQuota again) finds the reservations pending.
	got(begin("10", "/q/f", 70, false, hour, shoal.Condition{})).must(t)
	got(c.SetQuota(ctx(t), "/q", 2000, 0)).must(t)
	wantQuota(t, c, "recounted", "/q", 70)
	// The quota removed and set again: the pending upload's reservation is
	// counted again, and its commit gives it back.
	ok(t, c.RemoveQuota(ctx(t), "/q"))
	got(c.SetQuota(ctx(t), "/q", 2000, 0)).must(t)
	wantQuota(t, c, "set again", "/q", 70)
	got(finish("10", 70)).must(t)
	wantQuota(t, c, "set again, committed", "/q", 0)

	// The entry limit: with every entry used, the reservation of a new
	// file is refused and one replacing a file is not (BeginUpload sees
	// which it is).
	mkdir(t, c, "/n")
	got(putSized(t, c, "/n/one", 1)).must(t)
	got(c.SetQuota(ctx(t), "/n", 0, 1)).must(t)
	_, err = begin("11", "/n/two", 5, false, hour, shoal.Condition{})
	wantKind(t, "a new file's reservation over the entry limit", err, shoal.KindQuota)
	wantQuota(t, c, "refused, over the entry limit", "/n", 0)
	got(begin("12", "/n/one", 5, false, hour, shoal.Condition{})).must(t)
	got(finish("12", 5)).must(t)
	wantQuota(t, c, "replaced within the entry limit", "/n", 0)

	// An overwrite holds only what it adds: in a full quota a file is
	// replaced by a smaller one, a larger one needs room for the
	// difference only, and an over-full quota (limit lowered) still takes
	// a shrinking overwrite.
	mkdir(t, c, "/full")
	got(putSized(t, c, "/full/big", 900)).must(t)
	got(putSized(t, c, "/full/other", 100)).must(t)
	got(c.SetQuota(ctx(t), "/full", 1000, 0)).must(t)
	got(begin("30", "/full/big", 850, false, hour, shoal.Condition{})).must(t)
	wantQuota(t, c, "a shrinking overwrite of a full quota holds nothing", "/full", 0)
	got(finish("30", 850)).must(t)
	wantQuota(t, c, "shrunk", "/full", 0)
	got(begin("31", "/full/other", 130, false, hour, shoal.Condition{})).must(t)
	wantQuota(t, c, "a growing overwrite holds the difference", "/full", 30)
	_, err = begin("32", "/full/big", 871, false, hour, shoal.Condition{})
	wantKind(t, "an overwrite growing past the room left", err, shoal.KindQuota)
	got(finish("31", 130)).must(t)
	wantQuota(t, c, "grown", "/full", 0)
	got(c.SetQuota(ctx(t), "/full", 500, 0)).must(t) // 980 used
	got(begin("33", "/full/other", 10, false, hour, shoal.Condition{})).must(t)
	got(finish("33", 10)).must(t)
	wantQuota(t, c, "shrunk in an over-full quota", "/full", 0)
	if q := quotaOf(t, c, "/full"); q.UsedBytes != 860 {
		t.Errorf("over-full quota after a shrinking overwrite: %d bytes used, want 860", q.UsedBytes)
	}
}

// testConcurrentQuota: many reservations at once into a quota that holds
// only some: the granted ones never sum past the limit, each refusal is
// KindQuota, and after every commit the counters equal the tree.
func testConcurrentQuota(t *testing.T, c shoal.Catalog) {
	mkdir(t, c, "/cq")
	const n, size, limit = 32, 1000, 10500
	got(c.SetQuota(ctx(t), "/cq", limit, 0)).must(t)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("c%03x", i)
			path := fmt.Sprintf("/cq/f%02d", i)
			u := &shoal.Upload{ID: id, Path: path, Servers: []string{"s1"}, Object: "0e" + id, Layout: shoal.DefaultLayout,
				Expires: time.Now().Add(time.Hour), Reserve: size}
			if errs[i] = c.BeginUpload(ctx(t), u); errs[i] != nil {
				return
			}
			_, errs[i] = c.FinishUpload(ctx(t), &shoal.Commit{Upload: id, Size: size, MTime: t0,
				Replicas: []shoal.Replica{{Server: "s1", Object: "0e" + id, Size: size}}}, grace)
		}()
	}
	wg.Wait()
	granted := 0
	for i, err := range errs {
		switch {
		case err == nil:
			granted++
		case !shoal.IsKind(err, shoal.KindQuota):
			t.Errorf("upload %d: %v, want success or KindQuota", i, err)
		}
	}
	if granted != limit/size {
		t.Errorf("%d uploads of %d bytes granted in a quota of %d, want %d", granted, size, limit, limit/size)
	}
	wantQuota(t, c, "after the race", "/cq", 0)
}

// testAbortUpload: an aborted upload's reservation comes back at once,
// its object is garbage, and it can no longer be committed.
func testAbortUpload(t *testing.T, c shoal.Catalog) {
	mkdir(t, c, "/q")
	got(c.SetQuota(ctx(t), "/q", 1000, 0)).must(t)
	ok(t, c.BeginUpload(ctx(t), &shoal.Upload{ID: "ab01", Path: "/q/f", Servers: []string{"s1"}, Object: "0fab01",
		Layout: shoal.DefaultLayout, Expires: time.Now().Add(time.Hour), Reserve: 800}))
	wantQuota(t, c, "reserved", "/q", 800)
	ok(t, c.AbortUpload(ctx(t), "ab01"))
	wantQuota(t, c, "aborted", "/q", 0)
	if g := garbageObjects(t, c, "s1", time.Now().Add(time.Second)); g["0fab01"] != 1 {
		t.Errorf("garbage after abort = %v, want the upload's object", g)
	}
	_, err := c.FinishUpload(ctx(t), &shoal.Commit{Upload: "ab01", Size: 1, MTime: t0,
		Replicas: []shoal.Replica{{Server: "s1", Object: "0fab01", Size: 1}}}, grace)
	wantKind(t, "FinishUpload after abort", err, shoal.KindNotFound)
	wantKind(t, "AbortUpload twice", c.AbortUpload(ctx(t), "ab01"), shoal.KindNotFound)
	wantMissing(t, c, "/q/f")
}
