package catalog_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"shoal"
	"shoal/catalog"
)

func TestSQLiteGroupCommit(t *testing.T)  { testGroupCommit(t, openSQLite(t)) }
func TestMariaDBGroupCommit(t *testing.T) { testGroupCommit(t, openMariaDB(t)) }

// testGroupCommit queues transactions while the writers are held, so
// that they run as one batch, and checks that each gets the answer it
// would get alone: the ones that fail (a precondition, a missing parent,
// a failing statement) are rolled back alone and the others commit.
func testGroupCommit(t *testing.T, db *catalog.DB) {
	ctx := context.Background()
	now := time.Now()
	if _, err := db.Mkdir(ctx, "/g", now); err != nil {
		t.Fatal(err)
	}
	if _, err := db.PutInline(ctx, "/g/exists", []byte("old"), shoal.Sums{}, now, shoal.Condition{}, now); err != nil {
		t.Fatal(err)
	}
	// A directory holding one file at most, and holding it.
	if _, err := db.Mkdir(ctx, "/g/q", now); err != nil {
		t.Fatal(err)
	}
	if _, err := db.PutInline(ctx, "/g/q/a", []byte("a"), shoal.Sums{}, now, shoal.Condition{}, now); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SetQuota(ctx, "/g/q", 0, 1); err != nil {
		t.Fatal(err)
	}
	type call struct {
		name string
		fn   func() error
		fail bool
		want shoal.Kind // when fail
	}
	put := func(path, data string, cond shoal.Condition) func() error {
		return func() error {
			_, err := db.PutInline(ctx, path, []byte(data), shoal.Sums{}, now, cond, now)
			return err
		}
	}
	only := shoal.Condition{CreateOnly: true}
	var calls []call
	for i := range 6 {
		p := fmt.Sprintf("/g/f%d", i)
		calls = append(calls, call{"create " + p, put(p, p, only), false, 0})
		if i == 2 {
			calls = append(calls,
				call{"If-None-Match: * on an existing file", put("/g/exists", "new", only), true, shoal.KindPrecondition},
				call{"create under a missing directory", put("/nope/x", "x", shoal.Condition{}), true, shoal.KindConflict},
				call{"a statement the database refuses", func() error { return db.ExecInTx(ctx, "INSERT INTO no_such_table VALUES (1)") }, true, shoal.KindOther},
				call{"mkdir of an existing directory", func() error { _, err := db.Mkdir(ctx, "/g", now); return err }, true, shoal.KindExist},
			)
		}
	}
	// Two creates of one new name in the same batch: the second sees the
	// first's row.
	calls = append(calls, call{"first create of /g/same", put("/g/same", "1", only), false, 0},
		call{"second create of /g/same", put("/g/same", "2", only), true, shoal.KindPrecondition})

	batches0, txs0 := db.GroupStats()
	release := db.HoldWriters(t)
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Go(func() { errs[i] = c.fn() })
		// In order, so that the two creates of /g/same keep theirs.
		waitFor(t, func() bool { return db.Queued() == i+1 })
	}
	release()
	wg.Wait()
	batches, txs := db.GroupStats()
	if txs-txs0 < uint64(len(calls)) || batches-batches0 >= txs-txs0 {
		t.Errorf("%d transactions in %d batches: the held-back ones did not share a batch", txs-txs0, batches-batches0)
	}
	for i, c := range calls {
		switch {
		case !c.fail && errs[i] != nil:
			t.Errorf("%s: %v", c.name, errs[i])
		case c.fail && (errs[i] == nil || !shoal.IsKind(errs[i], c.want)):
			t.Errorf("%s: got %v (kind %v), want kind %v", c.name, errs[i], shoal.KindOf(errs[i]), c.want)
		}
	}
	for i := range 6 {
		p := fmt.Sprintf("/g/f%d", i)
		if e, err := db.Stat(ctx, p); err != nil || string(e.Inline) != p {
			t.Errorf("Stat %s = %v, %v", p, e, err)
		}
	}
	if e, err := db.Stat(ctx, "/g/exists"); err != nil || string(e.Inline) != "old" || e.Version != 1 {
		t.Errorf("/g/exists after a refused If-None-Match: * = %v, %v", e, err)
	}
	if e, err := db.Stat(ctx, "/g/same"); err != nil || string(e.Inline) != "1" {
		t.Errorf("/g/same = %v, %v; want the first create's", e, err)
	}
	// A batch whose one failure is refused after its row was written
	// (the quota is charged after the insert): that row is undone, the
	// others' stay.
	release = db.HoldWriters(t)
	quotaErr := make(chan error, 1)
	var wg2 sync.WaitGroup
	wg2.Go(func() {
		if err := put("/g/r1", "r1", only)(); err != nil {
			t.Error(err)
		}
	})
	waitFor(t, func() bool { return db.Queued() == 1 })
	wg2.Go(func() { quotaErr <- put("/g/q/b", "b", shoal.Condition{})() })
	waitFor(t, func() bool { return db.Queued() == 2 })
	wg2.Go(func() {
		if err := put("/g/r2", "r2", only)(); err != nil {
			t.Error(err)
		}
	})
	waitFor(t, func() bool { return db.Queued() == 3 })
	release()
	wg2.Wait()
	if err := <-quotaErr; !shoal.IsKind(err, shoal.KindQuota) {
		t.Errorf("create over a files quota: %v, want KindQuota", err)
	}
	for _, p := range []string{"/g/r1", "/g/r2"} {
		if _, err := db.Stat(ctx, p); err != nil {
			t.Errorf("Stat %s, batched beside a refused create: %v", p, err)
		}
	}
	if _, err := db.Stat(ctx, "/g/q/b"); !shoal.IsKind(err, shoal.KindNotFound) {
		t.Errorf("Stat /g/q/b, refused by its quota = %v, want KindNotFound", err)
	}
	if err := db.CheckQuotas(ctx); err != nil {
		t.Error(err)
	}
	if qs, err := db.QuotasFor(ctx, "/g/q/b"); err != nil || len(qs) != 1 || qs[0].UsedFiles != 1 {
		t.Errorf("quotas over /g/q/b = %+v, %v; want one, with one file used", qs, err)
	}
	if es, err := db.List(ctx, "/g"); err != nil || len(es) != 11 {
		t.Errorf("List /g = %d entries, %v; want 11", len(es), err)
	}
}

// Transactions whose callers give up while they wait for a batch are
// dropped, and the batch commits the others.
func TestSQLiteGroupCommitWithdrawn(t *testing.T) {
	db := openSQLite(t)
	ctx := context.Background()
	now := time.Now()
	release := db.HoldWriters(t)
	cctx, cancel := context.WithCancel(ctx)
	gone := make(chan error, 1)
	go func() { _, err := db.Mkdir(cctx, "/withdrawn", now); gone <- err }()
	waitFor(t, func() bool { return db.Queued() == 1 })
	kept := make(chan error, 1)
	go func() { _, err := db.Mkdir(ctx, "/kept", now); kept <- err }()
	waitFor(t, func() bool { return db.Queued() == 2 })
	cancel()
	if err := <-gone; !shoal.IsKind(err, shoal.KindUnavailable) {
		t.Errorf("Mkdir whose context ended in the queue = %v, want KindUnavailable", err)
	}
	release()
	if err := <-kept; err != nil {
		t.Errorf("Mkdir queued beside a withdrawn one: %v", err)
	}
	if _, err := db.Stat(ctx, "/withdrawn"); !shoal.IsKind(err, shoal.KindNotFound) {
		t.Errorf("Stat /withdrawn = %v, want KindNotFound", err)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting")
		}
		time.Sleep(time.Millisecond)
	}
}
