package catalogtest

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"shoal"
)

// testConcurrentCreates runs many writers at once, as md's connections do
// under a create load (so that a catalog with group commit shares their
// transactions): each creates files of its own, inline and through
// uploads, and all of them race for a few contested names with
// If-None-Match: *, and for a missing directory. Every call must get the
// answer it would get alone: no file lost or duplicated, exactly one
// winner per contested name (412 for the others), 409 under the missing
// directory, and the winners' and losers' calls do not undo each other.
func testConcurrentCreates(t *testing.T, c shoal.Catalog) {
	const (
		writers   = 24
		perWriter = 12
		contested = 6
	)
	mkdir(t, c, "/cc")
	type outcome struct {
		own      []error
		contests []error
		orphan   error
	}
	outs := make([]outcome, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			o := &outs[w]
			for i := range perWriter {
				p := fmt.Sprintf("/cc/w%02d-%02d", w, i)
				var err error
				if i%3 == 2 {
					err = createByUpload(t, c, p, fmt.Sprintf("cc%02d%02d", w, i))
				} else {
					_, err = c.PutInline(ctx(t), p, []byte(p), shoal.Sums{Adler32: uint32(i)}, t0, shoal.Condition{CreateOnly: true}, grace)
				}
				o.own = append(o.own, err)
				if i < contested {
					_, err = c.PutInline(ctx(t), fmt.Sprintf("/cc/contested-%d", i), []byte{byte(w)}, shoal.Sums{}, t0,
						shoal.Condition{CreateOnly: true}, grace)
					o.contests = append(o.contests, err)
				}
			}
			_, o.orphan = c.PutInline(ctx(t), fmt.Sprintf("/cc-missing/w%02d", w), []byte("x"), shoal.Sums{}, t0, shoal.Condition{}, grace)
		})
	}
	wg.Wait()

	wins := make([]int, contested)
	for w, o := range outs {
		for i, err := range o.own {
			if err != nil {
				t.Errorf("writer %d, file %d: %v", w, i, err)
			}
		}
		for i, err := range o.contests {
			if err == nil {
				wins[i]++
				continue
			}
			wantKind(t, fmt.Sprintf("writer %d, losing If-None-Match: * create of contested-%d", w, i), err, shoal.KindPrecondition)
		}
		wantKind(t, fmt.Sprintf("writer %d, create under a missing directory", w), o.orphan, shoal.KindConflict)
	}
	for i, n := range wins {
		if n != 1 {
			t.Errorf("contested-%d: %d creates with If-None-Match: * succeeded, want exactly 1", i, n)
		}
	}
	es := got(c.List(ctx(t), "/cc")).must(t)
	seen := map[string]int{}
	for _, e := range es {
		seen[e.Name()]++
	}
	if len(es) != writers*perWriter+contested || len(seen) != len(es) {
		t.Errorf("/cc lists %d entries (%d distinct), want %d", len(es), len(seen), writers*perWriter+contested)
	}
	for w := range writers {
		for i := range perWriter {
			name := fmt.Sprintf("w%02d-%02d", w, i)
			if seen[name] != 1 {
				t.Errorf("%s listed %d times, want once", name, seen[name])
				continue
			}
			e := stat(t, c, "/cc/"+name)
			if e.Version != 1 {
				t.Errorf("%s has version %d, want 1 (created once)", name, e.Version)
			}
			if i%3 == 2 && (len(e.Replicas) != 1 || e.Replicas[0].Object != fmt.Sprintf("cc%02d%02d", w, i)) {
				t.Errorf("%s replicas = %+v, want its one object", name, e.Replicas)
			}
			if i%3 != 2 && string(e.Inline) != "/cc/"+name {
				t.Errorf("%s holds %q, want its path", name, e.Inline)
			}
		}
	}
	wantMissing(t, c, "/cc-missing")
}

// testConcurrentOverwrites: many writers PUT the same few paths at once,
// unconditionally, the first of them creating each: every PUT succeeds
// (none is refused for losing a race), and each path ends with one
// version per PUT and one writer's bytes.
func testConcurrentOverwrites(t *testing.T, c shoal.Catalog) {
	const (
		writers = 24
		shared  = 3
	)
	mkdir(t, c, "/co")
	errs := make([][]error, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range shared {
				_, err := c.PutInline(ctx(t), fmt.Sprintf("/co/shared-%d", i), []byte{byte('a' + w)}, shoal.Sums{}, t0, shoal.Condition{}, grace)
				errs[w] = append(errs[w], err)
			}
		})
	}
	wg.Wait()
	for w, es := range errs {
		for i, err := range es {
			if err != nil {
				t.Errorf("writer %d, PUT of shared-%d: %v", w, i, err)
			}
		}
	}
	for i := range shared {
		e := stat(t, c, fmt.Sprintf("/co/shared-%d", i))
		if e.Version != writers || len(e.Inline) != 1 || e.Inline[0] < 'a' || e.Inline[0] >= 'a'+writers {
			t.Errorf("shared-%d: version %d holding %q, want version %d holding one writer's byte", i, e.Version, e.Inline, writers)
		}
	}
}

// createByUpload creates path with If-None-Match: * through an upload of
// object on server s1.
func createByUpload(t *testing.T, c shoal.Catalog, path, object string) error {
	id := hexID(int(uploadSeq.Add(1)))
	err := c.BeginUpload(ctx(t), &shoal.Upload{ID: id, Path: path, Servers: []string{"s1"}, Object: object,
		Layout: shoal.DefaultLayout, Cond: shoal.Condition{CreateOnly: true}, Expires: time.Now().Add(time.Hour)})
	if err != nil {
		return err
	}
	e, err := c.FinishUpload(ctx(t), &shoal.Commit{Upload: id, Size: 3, Sums: shoal.Sums{Adler32: 3}, MTime: t0,
		Replicas: []shoal.Replica{{Server: "s1", Object: object, Size: 3, Sum: 3}}}, grace)
	if err == nil && e.Path != path {
		return fmt.Errorf("FinishUpload made %s, want %s", e.Path, path)
	}
	return err
}

// testCreateAnswersAsStat: the entry a create returns is the one Stat
// reads back, for inline files and files on data servers.
func testCreateAnswersAsStat(t *testing.T, c shoal.Catalog) {
	mkdir(t, c, "/as")
	data := []byte("some bytes")
	sums := shoal.Sums{Adler32: 42, MD5: []byte("0123456789abcdef"), SHA256: []byte("0123456789abcdef0123456789abcdef")}
	e := got(c.PutInline(ctx(t), "/as/inline", data, sums, t0, shoal.Condition{}, grace)).must(t)
	data[0] = 'X' // the caller's buffer is its own again
	sameEntry(t, e, stat(t, c, "/as/inline"))
	empty := got(c.PutInline(ctx(t), "/as/empty", nil, shoal.Sums{}, t0, shoal.Condition{}, grace)).must(t)
	sameEntry(t, empty, stat(t, c, "/as/empty"))
	ok(t, c.BeginUpload(ctx(t), &shoal.Upload{ID: "as01", Path: "/as/ec", Servers: []string{"s1", "s2", "s3"}, Object: "as01",
		Layout: shoal.Layout{Kind: shoal.LayoutEC, K: 2, M: 1}, Expires: time.Now().Add(time.Hour)}))
	ec := got(c.FinishUpload(ctx(t), &shoal.Commit{Upload: "as01", Size: 5, Sums: sums, MTime: t0, Replicas: []shoal.Replica{
		{Server: "s3", Object: "as01", Shard: 2}, {Server: "s1", Object: "as01", Shard: 0}, {Server: "s2", Object: "as01", Shard: 1}}}, grace)).must(t)
	sameEntry(t, ec, stat(t, c, "/as/ec"))
}

func sameEntry(t *testing.T, made, read *shoal.Entry) {
	t.Helper()
	a, b := fmt.Sprintf("%+v", *made), fmt.Sprintf("%+v", *read)
	if a != b || !made.MTime.Equal(read.MTime) || !made.CTime.Equal(read.CTime) {
		t.Errorf("%s: the create answered\n%s\nStat reads\n%s", read.Path, a, b)
	}
}

// testPutFile: objects no reservation announced become a file in one
// call, checked and charged as a committed upload is; a refusal changes
// nothing.
func testPutFile(t *testing.T, c shoal.Catalog) {
	mkdir(t, c, "/pf")
	sums := shoal.Sums{Adler32: 42, MD5: []byte("0123456789abcdef")}
	file := func(obj string, size int64) *shoal.Commit {
		return &shoal.Commit{Size: size, Sums: sums, MTime: t0, Replicas: []shoal.Replica{{Server: "s1", Object: obj, Size: size, Sum: 42}}}
	}
	e := got(c.PutFile(ctx(t), "/pf/a", shoal.Layout{}, file("pf01", 10), shoal.Condition{}, grace)).must(t)
	if e.Version != 1 || e.Size != 10 || len(e.Replicas) != 1 || e.Replicas[0].Object != "pf01" || !e.Layout.IsZero() && e.Layout != shoal.DefaultLayout {
		t.Errorf("PutFile made %+v", e)
	}
	sameEntry(t, e, stat(t, c, "/pf/a"))
	r := got(c.PutFile(ctx(t), "/pf/a", shoal.Layout{}, file("pf02", 20), shoal.Condition{IfMatch: []string{e.ETag()}}, grace)).must(t)
	if r.Version != 2 || r.ID != e.ID || r.Replicas[0].Object != "pf02" {
		t.Errorf("PutFile over a file made %+v", r)
	}
	_, err := c.PutFile(ctx(t), "/pf/a", shoal.Layout{}, file("pf03", 5), shoal.Condition{CreateOnly: true}, grace)
	wantKind(t, "PutFile create-only on a file", err, shoal.KindPrecondition)
	_, err = c.PutFile(ctx(t), "/pf/a", shoal.Layout{}, file("pf03", 5), shoal.Condition{IfMatch: []string{e.ETag()}}, grace)
	wantKind(t, "PutFile with a stale If-Match", err, shoal.KindPrecondition)
	if s := stat(t, c, "/pf/a"); s.Version != 2 || s.Replicas[0].Object != "pf02" {
		t.Errorf("refused PutFiles changed the file: %+v", s)
	}
	_, err = c.PutFile(ctx(t), "/nope/a", shoal.Layout{}, file("pf04", 5), shoal.Condition{}, grace)
	wantKind(t, "PutFile under a missing parent", err, shoal.KindConflict)
	_, err = c.PutFile(ctx(t), "/pf", shoal.Layout{}, file("pf05", 5), shoal.Condition{}, grace)
	wantKind(t, "PutFile onto a directory", err, shoal.KindIsDir)
	_, err = c.PutFile(ctx(t), "/pf/b", shoal.Layout{}, &shoal.Commit{Size: 1, MTime: t0}, shoal.Condition{}, grace)
	wantKind(t, "PutFile without replicas", err, shoal.KindInvalid)
	wantMissing(t, c, "/nope/a", "/pf/b")

	// Charged to the quotas at once: what does not fit is refused.
	mkdir(t, c, "/pfq")
	got(c.SetQuota(ctx(t), "/pfq", 100, 0)).must(t)
	got(c.PutFile(ctx(t), "/pfq/a", shoal.Layout{}, file("pf06", 60), shoal.Condition{}, grace)).must(t)
	_, err = c.PutFile(ctx(t), "/pfq/b", shoal.Layout{}, file("pf07", 41), shoal.Condition{}, grace)
	wantKind(t, "PutFile of 41 bytes into 40 left", err, shoal.KindQuota)
	wantMissing(t, c, "/pfq/b")
	wantQuota(t, c, "after PutFile", "/pfq", 0)
}

// testTxStart: a PutFile given a context with shoal.WithTxStart calls its
// start before the file is visible, alone and among concurrent writers
// (whose transactions a group commit batches).
func testTxStart(t *testing.T, c shoal.Catalog) {
	mkdir(t, c, "/ts")
	file := func(obj string) *shoal.Commit {
		return &shoal.Commit{Size: 3, Sums: shoal.Sums{Adler32: 3}, MTime: t0, Replicas: []shoal.Replica{{Server: "s1", Object: obj, Size: 3, Sum: 3}}}
	}
	var early atomic.Bool
	alone := shoal.WithTxStart(ctx(t), func() {
		_, err := c.Stat(ctx(t), "/ts/alone")
		early.Store(shoal.KindOf(err) == shoal.KindNotFound)
	})
	got(c.PutFile(alone, "/ts/alone", shoal.Layout{}, file("ts00"), shoal.Condition{}, grace)).must(t)
	if !early.Load() {
		t.Error("PutFile did not call start, or called it once the file was visible")
	}
	const writers = 16
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			var started atomic.Int32
			wctx := shoal.WithTxStart(ctx(t), func() { started.Add(1) })
			if _, err := c.PutFile(wctx, fmt.Sprintf("/ts/w%02d", w), shoal.Layout{}, file(hexID(100+w)), shoal.Condition{}, grace); err != nil {
				t.Errorf("writer %d: %v", w, err)
			} else if started.Load() == 0 {
				t.Errorf("writer %d: PutFile returned without calling start", w)
			}
		})
	}
	wg.Wait()
}
