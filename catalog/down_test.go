package catalog_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"shoal"
	"shoal/catalog"
	"shoal/internal/testsvc"
)

// treeOf lists the whole namespace: one line per entry with what a
// client can see of it, and its dead properties.
func treeOf(t *testing.T, c shoal.Catalog) string {
	t.Helper()
	ctx := context.Background()
	var lines []string
	var walk func(dir string)
	walk = func(dir string) {
		es, err := c.List(ctx, dir)
		if err != nil {
			t.Fatalf("List %s: %v", dir, err)
		}
		for _, e := range es {
			props, err := c.Props(ctx, e.Path)
			if err != nil {
				t.Fatalf("Props %s: %v", e.Path, err)
			}
			lines = append(lines, fmt.Sprintf("%s dir=%v size=%d v=%d inline=%q props=%v", e.Path, e.IsDir, e.Size, e.Version, e.Inline, props))
			if e.IsDir {
				walk(e.Path)
			}
		}
	}
	walk("/")
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// With its MariaDB stopped, every catalog call fails with KindUnavailable
// (md: 503 + Retry-After), never KindOther, and changes nothing; when the
// server is back, the same *DB works again without being reopened (no
// prepared statement or pooled connection stays pinned to the dead
// server).
func TestMariaDBDownIsUnavailable(t *testing.T) {
	maria, db, now, before := startDown(t, catalog.Options{})
	ctx := context.Background()
	calls := downCalls(db, now)
	// A hung server: every call ends with its context's deadline, as
	// KindUnavailable.
	maria.Pause()
	wantUnavailable(t, calls, 300*time.Millisecond, "hung")
	maria.Resume()
	if after := treeOf(t, db); after != before {
		t.Errorf("calls that timed out changed the namespace:\nbefore:\n%s\nafter:\n%s", before, after)
	}

	// A stopped server: connections refused.
	maria.Stop()
	wantUnavailable(t, calls, 5*time.Second, "stopped")
	// A context that ends while the server is gone is KindUnavailable too.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := db.Stat(cctx, "/g"); !shoal.IsKind(err, shoal.KindUnavailable) {
		t.Errorf("Stat with a cancelled context = %v, want KindUnavailable", err)
	}

	maria.Start()
	if after := treeOf(t, db); after != before {
		t.Errorf("failed calls changed the namespace:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if _, err := db.Mkdir(ctx, "/new", now); err != nil {
		t.Errorf("Mkdir after restart: %v", err)
	}
	if _, err := db.Move(ctx, "/d", "/e", false, now); err != nil {
		t.Errorf("Move after restart: %v", err)
	}
	if e, err := db.Stat(ctx, "/e/sub/f"); err != nil || string(e.Inline) != "hello" {
		t.Errorf("Stat after restart = %v, %v", e, err)
	}
}

// A hung server ends calls whose context has no deadline (md's: it
// passes its server's lifetime) after CallTimeout, as KindUnavailable,
// including calls queued for a connection behind others that wait; the
// namespace is unchanged and the same *DB works once the server is back.
func TestMariaDBHungEndsUndeadlinedCalls(t *testing.T) {
	maria, db, now, before := startDown(t, catalog.Options{MaxOpenConns: 4, CallTimeout: time.Second})
	ctx := context.Background()
	calls := downCalls(db, now)

	maria.Pause()
	// Twice the pool's size of each call at once: half of them wait for a
	// connection, then dial a server that does not answer.
	errs := make(chan error, 8*len(calls))
	for _, c := range calls {
		for range 8 {
			go func() { errs <- fmt.Errorf("%s: %w", c.name, c.fn(ctx)) }()
		}
	}
	guard := time.After(30 * time.Second) // a hang, not a speed bound
	for range cap(errs) {
		select {
		case err := <-errs:
			if !shoal.IsKind(err, shoal.KindUnavailable) {
				t.Errorf("with MariaDB hung and no deadline: %v (kind %v), want KindUnavailable", err, shoal.KindOf(err))
			}
		case <-guard:
			t.Fatal("catalog calls without a deadline still hang on a hung MariaDB after 30 s")
		}
	}
	maria.Resume()
	if after := treeOf(t, db); after != before {
		t.Errorf("calls that timed out changed the namespace:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if _, err := db.Mkdir(ctx, "/new", now); err != nil {
		t.Errorf("Mkdir after resume: %v", err)
	}
}

// startDown opens a catalog with opts on a private MariaDB, seeded by
// seedDown; it returns the time it seeded at and the tree.
func startDown(t *testing.T, opts catalog.Options) (*testsvc.MariaDBProcess, *catalog.DB, time.Time, string) {
	t.Helper()
	maria := testsvc.StartMariaDB(t)
	opts.DSN = maria.DSN
	db, err := catalog.Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	// Resume before Close: Close waits for the connections of a paused
	// server (cleanups run last-registered first).
	t.Cleanup(func() { db.Close() })
	t.Cleanup(maria.Resume)
	now := time.Now()
	return maria, db, now, seedDown(t, db, now)
}

// Open against a hung server ends after CallTimeout with KindUnavailable
// naming the key (md's start would hang for ever otherwise).
func TestMariaDBHungAtOpen(t *testing.T) {
	maria := testsvc.StartMariaDB(t)
	maria.Pause()
	defer maria.Resume()
	done := make(chan error, 1)
	go func() {
		db, err := catalog.Open(context.Background(), catalog.Options{DSN: maria.DSN, CallTimeout: time.Second})
		if err == nil {
			db.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if !shoal.IsKind(err, shoal.KindUnavailable) || !strings.Contains(err.Error(), "catalog.call_timeout") {
			t.Errorf("Open with MariaDB hung = %v, want KindUnavailable naming catalog.call_timeout", err)
		}
	case <-time.After(30 * time.Second): // a hang, not a speed bound
		t.Fatal("Open still hangs on a hung MariaDB after 30 s")
	}
}

// wantUnavailable runs each call with a context of the given deadline and
// checks that it fails with KindUnavailable (MariaDB being state).
func wantUnavailable(t *testing.T, calls []downCall, deadline time.Duration, state string) {
	t.Helper()
	for _, c := range calls {
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		err := c.fn(ctx)
		cancel()
		if !shoal.IsKind(err, shoal.KindUnavailable) {
			t.Errorf("%s with MariaDB %s = %v (kind %v), want KindUnavailable", c.name, state, err, shoal.KindOf(err))
		}
	}
}

// downCall is one catalog call of those the down tests make fail.
type downCall struct {
	name string
	fn   func(ctx context.Context) error
}

// seedDown fills db with what downCalls reach and returns its tree.
func seedDown(t *testing.T, db *catalog.DB, now time.Time) string {
	t.Helper()
	ctx := context.Background()
	var err error
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err = db.Mkdir(ctx, "/d", now)
	must(err)
	_, err = db.Mkdir(ctx, "/d/sub", now)
	must(err)
	_, err = db.PutInline(ctx, "/d/sub/f", []byte("hello"), shoal.Sums{}, now, shoal.Condition{}, now)
	must(err)
	_, err = db.PutInline(ctx, "/g", []byte("world"), shoal.Sums{}, now, shoal.Condition{}, now)
	must(err)
	must(db.PatchProps(ctx, "/g", []shoal.Prop{{Space: "urn:x", Name: "a", Value: "1"}}, nil))
	must(db.PutServer(ctx, &shoal.Server{ID: "s1", URL: "http://127.0.0.1:1", Pool: "default", State: shoal.ServerActive, Free: 1, Total: 2, LastSeen: now}))
	// Fill the pool with idle connections that will all be dead.
	for range 20 {
		go db.Stat(ctx, "/d/sub/f")
	}
	return treeOf(t, db)
}

// downCalls is a call of every kind: reads, group-committed writes, tree
// operations, uploads, servers, garbage and quotas.
func downCalls(db *catalog.DB, now time.Time) []downCall {
	return []downCall{
		{"Stat", func(ctx context.Context) error { _, err := db.Stat(ctx, "/d/sub/f"); return err }},
		{"Stat missing", func(ctx context.Context) error { _, err := db.Stat(ctx, "/nope/x"); return err }},
		{"List", func(ctx context.Context) error { _, err := db.List(ctx, "/d"); return err }},
		{"Mkdir", func(ctx context.Context) error { _, err := db.Mkdir(ctx, "/new", now); return err }},
		{"PutInline", func(ctx context.Context) error {
			_, err := db.PutInline(ctx, "/d/sub/f", []byte("changed"), shoal.Sums{}, now, shoal.Condition{}, now)
			return err
		}},
		{"Remove", func(ctx context.Context) error { return db.Remove(ctx, "/d", now) }},
		{"Move", func(ctx context.Context) error { _, err := db.Move(ctx, "/d", "/e", false, now); return err }},
		{"Copy", func(ctx context.Context) error { _, err := db.Copy(ctx, "/d", "/c", false, now); return err }},
		{"Props", func(ctx context.Context) error { _, err := db.Props(ctx, "/g"); return err }},
		{"PatchProps", func(ctx context.Context) error {
			return db.PatchProps(ctx, "/g", []shoal.Prop{{Space: "urn:x", Name: "b", Value: "2"}}, nil)
		}},
		{"BeginUpload", func(ctx context.Context) error {
			return db.BeginUpload(ctx, &shoal.Upload{ID: "u1", Path: "/up", Servers: []string{"s1"}, Object: "o1",
				Layout: shoal.DefaultLayout, Expires: now.Add(time.Hour)})
		}},
		{"ExpireUploads", func(ctx context.Context) error { _, err := db.ExpireUploads(ctx, now); return err }},
		{"Servers", func(ctx context.Context) error { _, err := db.Servers(ctx); return err }},
		{"PutServer", func(ctx context.Context) error {
			return db.PutServer(ctx, &shoal.Server{ID: "s2", URL: "http://127.0.0.1:2", Pool: "default", State: shoal.ServerActive, LastSeen: now})
		}},
		{"Garbage", func(ctx context.Context) error { _, err := db.Garbage(ctx, "s1", now, 10); return err }},
		{"Usage", func(ctx context.Context) error { _, _, err := db.Usage(ctx, "/"); return err }},
	}
}
