package md

import (
	"bytes"
	"context"
	"testing"
	"time"

	"shoal"
)

// TestReconcileStaged: what a crash leaves staged in `shoal all`'s own
// store is settled by the catalog at md's start: the object a committed
// entry names is published and served, bytes exact; the one no entry
// names is removed; nothing stays staged. A local PUT itself leaves
// nothing staged.
func TestReconcileStaged(t *testing.T) {
	e := newEnvLocal(t, DataAuto, true)
	ctx := context.Background()
	st := e.ds.Store()
	data := bytes.Repeat([]byte("committed "), 2000) // 20 KB: not inline
	if r := e.put("/f", data); r.status != 201 {
		t.Fatalf("local PUT: %v", r)
	}
	if ids, err := st.Staged(ctx); err != nil || len(ids) != 0 {
		t.Fatalf("a local PUT left %v staged (%v)", ids, err)
	}

	// As a crash leaves it: one object committed but not published, one
	// never committed.
	info, sums, err := st.CreateStaged(ctx, "c0ffee", bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	commit := &shoal.Commit{Size: info.Size, Sums: sums, MTime: time.Now(),
		Replicas: []shoal.Replica{{Server: e.ds.ID(), Object: "c0ffee", Size: info.Size, Sum: sums.Adler32}}}
	if _, err := e.db.PutFile(ctx, "/crashed", shoal.DefaultLayout, commit, shoal.Condition{}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.CreateStaged(ctx, "dead", bytes.NewReader(data), int64(len(data))); err != nil {
		t.Fatal(err)
	}
	if r := e.get("/crashed", nil); r.status == 200 {
		t.Fatal("an unpublished object was served")
	}

	if err := reconcileStaged(ctx, e.db, st, e.ds.ID(), nil); err != nil {
		t.Fatal(err)
	}
	if ids, err := st.Staged(ctx); err != nil || len(ids) != 0 {
		t.Errorf("after reconciling, %v still staged (%v)", ids, err)
	}
	if r := e.get("/crashed", nil); r.status != 200 || r.body != string(data) {
		t.Errorf("the committed object after reconciling: %d, %d bytes", r.status, len(r.body))
	}
	if _, err := st.Open(ctx, "dead"); !shoal.IsKind(err, shoal.KindNotFound) {
		t.Errorf("the uncommitted object after reconciling: %v, want it removed", err)
	}
}
