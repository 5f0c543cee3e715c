package catalog_test

import (
	"bytes"
	"context"
	"database/sql"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"shoal"
	"shoal/catalog"
	"shoal/internal/testsvc"
)

// A catalog written by a binary of schema version 2 (replicas only in
// their own table) migrates in place to version 3 (replica_list in the
// entry row): every entry, replica (in shard, then row order), property,
// pool mapping and server reads as before, and writes keep working.
func TestMigrateV2ToV3(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		testMigrateV2ToV3(t, "sqlite:"+filepath.Join(t.TempDir(), "old.db"))
	})
	t.Run("mariadb", func(t *testing.T) { testMigrateV2ToV3(t, testsvc.MariaDB(t)) })
}

// v2Replica is a replica row as a version-2 binary inserted it.
type v2Replica struct {
	entry int64
	r     shoal.Replica
}

func testMigrateV2ToV3(t *testing.T, dsn string) {
	ctx := context.Background()
	w, closeOld, err := catalog.OpenAtVersion(ctx, dsn, 2)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UnixNano()
	md5 := bytes.Repeat([]byte{0xab}, 16)
	type ent struct {
		id, parent int64
		path       string
		isDir      bool
		size       int64
		layout     string
		inline     []byte
	}
	ents := []ent{
		{2, 1, "/a", true, 0, "", nil},
		{3, 2, "/a/b", true, 0, "", nil},
		{4, 2, "/a/f1", false, 10, "replica:2", nil},
		{5, 3, "/a/b/ec", false, 100, "ec:4+2", nil},
		{6, 2, "/a/inline", false, 5, "", []byte("hello")},
		{7, 2, "/a/copy", false, 10, "replica:2", nil},
	}
	for _, e := range ents {
		var sums []any
		if !e.isDir {
			sums = []any{int64(7), md5}
		} else {
			sums = []any{int64(0), nil}
		}
		mustExec(t, w, `INSERT INTO entries (id, parent_id, name, path, path_hash, is_dir, size, mtime_ns, ctime_ns,
			version, adler32, md5, inline, layout) VALUES (?,?,?,?,?,?,?,?,?,3,?,?,?,?)`,
			e.id, e.parent, filepath.Base(e.path), e.path, catalog.PathHash(e.path), e.isDir, e.size, now, now,
			sums[0], sums[1], e.inline, e.layout)
	}
	// Plain replicas share shard 0: their order is the rows' (s2 first).
	// Shards were inserted out of order; one server name holds the list's
	// separators.
	reps := []v2Replica{
		{4, shoal.Replica{Server: "s2", Object: "0a0a", Size: 10, Sum: 111}},
		{4, shoal.Replica{Server: "s1", Object: "0a0a", Size: 10, Sum: 111}},
		{7, shoal.Replica{Server: "s1", Object: "0a0a", Size: 10, Sum: 111}},
		{7, shoal.Replica{Server: "s:2,x", Object: "0a0a", Size: 10, Sum: 4294967295}},
	}
	for _, shard := range []int{3, 0, 5, 1, 4, 2} {
		reps = append(reps, v2Replica{5, shoal.Replica{Server: "d" + string(rune('0'+shard)), Object: "0b0b",
			Shard: shard, Size: 25, Sum: uint32(1000 * shard)}})
	}
	for _, r := range reps {
		mustExec(t, w, `INSERT INTO replicas (entry_id, server, object, shard, size, sum) VALUES (?,?,?,?,?,?)`,
			r.entry, r.r.Server, r.r.Object, r.r.Shard, r.r.Size, int64(r.r.Sum))
	}
	mustExec(t, w, `INSERT INTO props (entry_id, space, name, value) VALUES (4, 'urn:x', 'color', '<x>red</x>'), (2, 'urn:x', 'owner', 'me')`)
	mustExec(t, w, `INSERT INTO pools (name, layout) VALUES ('fast', 'replica:1')`)
	mustExec(t, w, `INSERT INTO dir_pools (dir_id, pool) VALUES (3, 'fast')`)
	mustExec(t, w, `INSERT INTO servers (id, url, pool, state, free, total, last_seen_ns) VALUES ('s1', 'http://127.0.0.1:1', 'default', 'active', 1, 2, ?)`, now)
	closeOld()

	db, err := catalog.Open(ctx, catalog.Options{DSN: dsn}) // migrates
	if err != nil {
		t.Fatalf("Open of a version-2 catalog: %v", err)
	}
	defer db.Close()

	wantReps := map[string][]shoal.Replica{
		"/a/f1":   {reps[0].r, reps[1].r},
		"/a/copy": {reps[2].r, reps[3].r},
	}
	for shard := range 6 {
		i := slices.IndexFunc(reps, func(r v2Replica) bool { return r.entry == 5 && r.r.Shard == shard })
		wantReps["/a/b/ec"] = append(wantReps["/a/b/ec"], reps[i].r)
	}
	for _, want := range ents {
		e, err := db.Stat(ctx, want.path)
		if err != nil {
			t.Fatalf("Stat %s after migration: %v", want.path, err)
		}
		if e.ID != want.id || e.Parent != want.parent || e.IsDir != want.isDir || e.Size != want.size || e.Version != 3 {
			t.Errorf("Stat %s = id %d parent %d dir %v size %d version %d, want %+v", want.path, e.ID, e.Parent, e.IsDir, e.Size, e.Version, want)
		}
		if !want.isDir && (e.Sums.Adler32 != 7 || !bytes.Equal(e.Sums.MD5, md5)) {
			t.Errorf("Stat %s sums = %+v", want.path, e.Sums)
		}
		if want.layout != "" && e.Layout.String() != want.layout {
			t.Errorf("Stat %s layout = %v, want %s", want.path, e.Layout, want.layout)
		}
		if want.inline != nil && string(e.Inline) != string(want.inline) {
			t.Errorf("Stat %s inline = %q, want %q", want.path, e.Inline, want.inline)
		}
		if !reflect.DeepEqual(e.Replicas, wantReps[want.path]) {
			t.Errorf("Stat %s replicas = %+v\nwant %+v", want.path, e.Replicas, wantReps[want.path])
		}
	}
	list, err := db.List(ctx, "/a")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range list {
		names = append(names, e.Name())
		if !reflect.DeepEqual(e.Replicas, wantReps[e.Path]) {
			t.Errorf("List: %s replicas = %+v, want %+v", e.Path, e.Replicas, wantReps[e.Path])
		}
	}
	if want := []string{"b", "copy", "f1", "inline"}; !slices.Equal(names, want) {
		t.Errorf("List /a = %v, want %v", names, want)
	}
	for path, want := range map[string]shoal.Prop{"/a/f1": {Space: "urn:x", Name: "color", Value: "<x>red</x>"}, "/a": {Space: "urn:x", Name: "owner", Value: "me"}} {
		if props, err := db.Props(ctx, path); err != nil || len(props) != 1 || props[0] != want {
			t.Errorf("Props %s = %v, %v; want [%v]", path, props, err, want)
		}
	}
	if p, err := db.PoolFor(ctx, "/a/b/new"); err != nil || p.Name != "fast" || p.Layout.String() != "replica:1" {
		t.Errorf("PoolFor /a/b/new = %+v, %v; want fast replica:1", p, err)
	}
	if p, err := db.PoolFor(ctx, "/a/new"); err != nil || p.Name != shoal.DefaultPool {
		t.Errorf("PoolFor /a/new = %+v, %v; want %s", p, err, shoal.DefaultPool)
	}
	if ss, err := db.Servers(ctx); err != nil || len(ss) != 1 || ss[0].ID != "s1" || ss[0].State != shoal.ServerActive {
		t.Errorf("Servers = %+v, %v", ss, err)
	}
	var walked []string
	if err := db.WalkReplicas(ctx, "s1", func(path string, r shoal.Replica) error {
		walked = append(walked, path)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(walked)
	if want := []string{"/a/copy", "/a/f1"}; !slices.Equal(walked, want) {
		t.Errorf("WalkReplicas s1 = %v, want %v", walked, want)
	}

	// Writes after the migration keep replica_list in step.
	old := wantReps["/a/b/ec"][3]
	moved := shoal.Replica{Server: "d9", Object: "0c0c", Shard: 3, Size: 25, Sum: 3000}
	if err := db.ReplaceReplica(ctx, "/a/b/ec", old, moved, time.Now()); err != nil {
		t.Fatal(err)
	}
	if e, err := db.Stat(ctx, "/a/b/ec"); err != nil || len(e.Replicas) != 6 || e.Replicas[3] != moved {
		t.Errorf("after ReplaceReplica: %+v, %v", e, err)
	}
	if _, err := db.PutInline(ctx, "/a/f1", []byte("x"), shoal.Sums{}, time.Now(), shoal.Condition{}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if e, err := db.Stat(ctx, "/a/f1"); err != nil || len(e.Replicas) != 0 || string(e.Inline) != "x" {
		t.Errorf("after overwrite with inline: %+v, %v", e, err)
	}
	if _, err := db.Copy(ctx, "/a", "/a2", false, time.Now()); err != nil {
		t.Fatal(err)
	}
	if e, err := db.Stat(ctx, "/a2/b/ec"); err != nil || len(e.Replicas) != 6 || e.Replicas[3] != moved {
		t.Errorf("copied ec file: %+v, %v", e, err)
	}
	if err := db.CheckReplicaLists(ctx); err != nil {
		t.Error(err)
	}

	// Opening the migrated catalog again changes nothing.
	db2, err := catalog.Open(ctx, catalog.Options{DSN: dsn})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	db2.Close()
}

func mustExec(t *testing.T, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// A catalog of schema version 6 migrates in place to version 7 (the jobs
// table): its entries and servers read as before, and jobs can be
// created, claimed and finished.
func TestMigrateV6ToV7(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		testMigrateV6ToV7(t, "sqlite:"+filepath.Join(t.TempDir(), "old.db"))
	})
	t.Run("mariadb", func(t *testing.T) { testMigrateV6ToV7(t, testsvc.MariaDB(t)) })
}

func testMigrateV6ToV7(t *testing.T, dsn string) {
	ctx := context.Background()
	w, closeOld, err := catalog.OpenAtVersion(ctx, dsn, 6)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Exec(`SELECT COUNT(*) FROM jobs`); err == nil {
		t.Fatal("a version-6 catalog has a jobs table")
	}
	now := time.Now().UnixNano()
	mustExec(t, w, `INSERT INTO entries (id, parent_id, name, path, path_hash, is_dir, size, mtime_ns, ctime_ns, version, adler32, inline, layout, replica_list)
		VALUES (2, 1, 'f', '/f', ?, 0, 5, ?, ?, 1, 7, ?, '', '')`, catalog.PathHash("/f"), now, now, []byte("hello"))
	mustExec(t, w, `INSERT INTO servers (id, url, pool, state, free, total, last_seen_ns) VALUES ('s1', 'http://127.0.0.1:1', 'default', 'draining', 1, 2, ?)`, now)
	closeOld()

	db, err := catalog.Open(ctx, catalog.Options{DSN: dsn}) // migrates
	if err != nil {
		t.Fatalf("Open of a version-6 catalog: %v", err)
	}
	defer db.Close()
	if e, err := db.Stat(ctx, "/f"); err != nil || string(e.Inline) != "hello" || e.Sums.Adler32 != 7 {
		t.Errorf("Stat /f after migration: %+v, %v", e, err)
	}
	if ss, err := db.Servers(ctx); err != nil || len(ss) != 1 || ss[0].State != shoal.ServerDraining {
		t.Errorf("Servers after migration: %+v, %v", ss, err)
	}
	j, err := db.CreateJob(ctx, &shoal.Job{Kind: "fsck"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := db.ClaimJob(ctx, "r1", time.Now(), time.Minute)
	if err != nil || c.ID != j.ID {
		t.Fatalf("ClaimJob after migration: %+v, %v", c, err)
	}
	if err := db.FinishJob(ctx, &shoal.Job{ID: j.ID, Owner: "r1", State: shoal.JobDone, Result: []byte(`{"ok":true}`)}, time.Now()); err != nil {
		t.Fatal(err)
	}
	db2, err := catalog.Open(ctx, catalog.Options{DSN: dsn}) // opening again changes nothing
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer db2.Close()
	if j, err := db2.Job(ctx, j.ID); err != nil || j.State != shoal.JobDone || string(j.Result) != `{"ok":true}` {
		t.Errorf("job after reopen: %+v, %v", j, err)
	}
}

// A version-7 catalog (before quotas) with a directory of files and an
// upload pending migrates to version 8: a quota set then counts what is
// there, the pending upload (which reserved nothing) commits against it,
// and the counters stay exact.
func TestMigrateV7ToV8(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		testMigrateV7ToV8(t, "sqlite:"+filepath.Join(t.TempDir(), "old.db"))
	})
	t.Run("mariadb", func(t *testing.T) { testMigrateV7ToV8(t, testsvc.MariaDB(t)) })
}

func testMigrateV7ToV8(t *testing.T, dsn string) {
	ctx := context.Background()
	w, closeOld, err := catalog.OpenAtVersion(ctx, dsn, 7)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Exec(`SELECT COUNT(*) FROM quotas`); err == nil {
		t.Fatal("a version-7 catalog has a quotas table")
	}
	now := time.Now().UnixNano()
	mustExec(t, w, `INSERT INTO entries (id, parent_id, name, path, path_hash, is_dir, size, mtime_ns, ctime_ns, version, adler32, inline, layout, replica_list)
		VALUES (2, 1, 'd', '/d', ?, 1, 0, ?, ?, 1, 0, NULL, '', '')`, catalog.PathHash("/d"), now, now)
	mustExec(t, w, `INSERT INTO entries (id, parent_id, name, path, path_hash, is_dir, size, mtime_ns, ctime_ns, version, adler32, inline, layout, replica_list)
		VALUES (3, 2, 'f', '/d/f', ?, 0, 5, ?, ?, 1, 7, ?, '', '')`, catalog.PathHash("/d/f"), now, now, []byte("hello"))
	mustExec(t, w, `INSERT INTO uploads (id, path, servers, object, layout, create_only, if_match, client, expires_ns)
		VALUES ('u1', '/d/g', 's1', 'abcd', 'replica:1', 0, '', '', ?)`, time.Now().Add(time.Hour).UnixNano())
	closeOld()

	db, err := catalog.Open(ctx, catalog.Options{DSN: dsn}) // migrates
	if err != nil {
		t.Fatalf("Open of a version-7 catalog: %v", err)
	}
	defer db.Close()
	q, err := db.SetQuota(ctx, "/d", 100, 0)
	if err != nil || q.UsedBytes != 5 || q.UsedFiles != 1 || q.Reserved != 0 {
		t.Fatalf("SetQuota after migration: %+v, %v", q, err)
	}
	if _, err := db.FinishUpload(ctx, &shoal.Commit{Upload: "u1", Size: 96, MTime: time.Now(),
		Replicas: []shoal.Replica{{Server: "s1", Object: "abcd", Size: 96}}}, time.Now()); !shoal.IsKind(err, shoal.KindQuota) {
		t.Errorf("commit of an old upload over the quota: %v, want KindQuota", err)
	}
	if err := db.CheckQuotas(ctx); err != nil {
		t.Error(err)
	}
}

// A version-9 SQLite catalog (entries found by path_hash) migrates to
// version 10 (found by path, through a unique index on it): what was there
// reads as before, a file used as a parent still says so, a create-only
// PUT of an existing path is still refused, and new writes work.
func TestMigrateSQLiteV9ToV10(t *testing.T) {
	ctx := context.Background()
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "old.db")
	w, closeOld, err := catalog.OpenAtVersion(ctx, dsn, 9)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UnixNano()
	mustExec(t, w, `INSERT INTO entries (id, parent_id, name, path, path_hash, is_dir, size, mtime_ns, ctime_ns, version, adler32, inline, layout, replica_list)
		VALUES (2, 1, 'd', '/d', ?, 1, 0, ?, ?, 1, 0, NULL, '', '')`, catalog.PathHash("/d"), now, now)
	mustExec(t, w, `INSERT INTO entries (id, parent_id, name, path, path_hash, is_dir, size, mtime_ns, ctime_ns, version, adler32, inline, layout, replica_list)
		VALUES (3, 2, 'f', '/d/f', ?, 0, 5, ?, ?, 1, 7, ?, '', '')`, catalog.PathHash("/d/f"), now, now, []byte("hello"))
	closeOld()

	db, err := catalog.Open(ctx, catalog.Options{DSN: dsn}) // migrates
	if err != nil {
		t.Fatalf("Open of a version-9 catalog: %v", err)
	}
	defer db.Close()
	if e, err := db.Stat(ctx, "/d/f"); err != nil || string(e.Inline) != "hello" {
		t.Fatalf("Stat /d/f after migration: %+v, %v", e, err)
	}
	if _, err := db.Stat(ctx, "/d/f/x"); !shoal.IsKind(err, shoal.KindNotDir) {
		t.Errorf("Stat below a file: %v, want KindNotDir", err)
	}
	if _, err := db.PutInline(ctx, "/d/f", []byte("x"), shoal.Sums{}, time.Now(), shoal.Condition{CreateOnly: true}, time.Time{}); !shoal.IsKind(err, shoal.KindPrecondition) {
		t.Errorf("create-only PUT of an existing file: %v, want KindPrecondition", err)
	}
	if _, err := db.PutInline(ctx, "/d/g", []byte("new"), shoal.Sums{}, time.Now(), shoal.Condition{CreateOnly: true}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	ls, err := db.List(ctx, "/d")
	if err != nil || len(ls) != 2 || ls[0].Path != "/d/f" || ls[1].Path != "/d/g" {
		t.Fatalf("List /d: %v, %v", ls, err)
	}
	// The unique index on path is what keeps paths unique now.
	w, closeW, err := catalog.OpenAtVersion(ctx, dsn, 10)
	if err != nil {
		t.Fatal(err)
	}
	defer closeW()
	if _, err := w.Exec(`INSERT INTO entries (parent_id, name, path, path_hash, is_dir, mtime_ns, ctime_ns)
		VALUES (2, 'g2', '/d/g', X'00', 0, 0, 0)`); err == nil {
		t.Error("a second row for /d/g was accepted")
	}
}
