package md

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"shoal"
	"shoal/diskserver"
	"shoal/internal/settle"
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

	if err := settle.Staged(ctx, e.db, st, e.ds.ID(), nil); err != nil {
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

// TestStagedRefusedAtCommit: a local PUT whose conditions held when md
// planned it but not at its commit (If-None-Match: * and the file
// created meanwhile) is 412, and its staged object is removed: nothing
// is left on the data server, staged or published.
func TestStagedRefusedAtCommit(t *testing.T) {
	e := newEnvLocal(t, DataAuto, true)
	before := e.snapshot()
	// A body larger than every buffer between the client and md's
	// handler: once the client has sent all but its last byte, md has
	// planned the PUT (checked If-None-Match) and is reading the body.
	const size = 64<<20 + 1
	pr, pw := io.Pipe()
	req, err := http.NewRequest("PUT", e.url+"/race", pr)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = size
	req.Header.Set("If-None-Match", "*")
	type answer struct {
		status int
		body   string
		err    error
	}
	done := make(chan answer, 1)
	go func() {
		res, err := e.http.Do(req)
		if err != nil {
			done <- answer{err: err}
			return
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		done <- answer{status: res.StatusCode, body: string(b)}
	}()
	chunk := bytes.Repeat([]byte("s"), 1<<20)
	for range (size - 1) / len(chunk) {
		if _, err := pw.Write(chunk); err != nil {
			t.Fatalf("body: %v (%v)", err, <-done)
		}
	}
	e.do("PUT", "/race", nil, []byte("x")).want(t, "the create that wins", 201, "")
	pw.Write([]byte("s"))
	pw.Close()
	a := <-done
	if a.err != nil || a.status != 412 {
		t.Fatalf("PUT refused at commit: %d %q %v, want 412", a.status, a.body, a.err)
	}
	// The catalog's refusal, not planPut's ("exists (If-None-Match: *)"):
	// the object was written and staged before it.
	if !strings.Contains(a.body, "/race exists") {
		t.Errorf("412 %q: not the commit's refusal", a.body)
	}
	e.do("DELETE", "/race", nil, nil).want(t, "DELETE the winner", 204, "")
	if after := e.snapshot(); after != before {
		t.Errorf("a PUT refused at commit left something:\nbefore %s\nafter %s", before, after)
	}
}

// TestStagedQuotaConcurrent: small local PUTs under a quota are not
// reserved for; their commits charge the quota, so however many race,
// exactly as many as fit are created (201), the others are 507, the
// quota counts what was created and nothing is left reserved or staged.
func TestStagedQuotaConcurrent(t *testing.T) {
	e := newEnvLocal(t, DataAuto, true)
	ctx := context.Background()
	const n, size = 24, 64 << 10
	const fit = 8
	e.do("MKCOL", "/q", nil, nil).want(t, "MKCOL", 201, "")
	if _, err := e.db.SetQuota(ctx, "/q", fit*size+1000, 0); err != nil {
		t.Fatal(err)
	}
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			statuses[i] = e.do("PUT", fmt.Sprintf("/q/f%02d", i), nil, bytes.Repeat([]byte{byte(i)}, size)).status
		})
	}
	wg.Wait()
	created := 0
	for i, st := range statuses {
		switch st {
		case 201:
			created++
		case 507:
		default:
			t.Errorf("PUT %d: %d, want 201 or 507", i, st)
		}
	}
	if created != fit {
		t.Errorf("%d PUTs created, want %d (what the quota holds)", created, fit)
	}
	qs, err := e.db.QuotasFor(ctx, "/q/x")
	if err != nil || len(qs) != 1 || qs[0].UsedBytes != int64(created*size) || qs[0].UsedFiles != int64(created) || qs[0].Reserved != 0 {
		t.Errorf("quota after the race: %+v %v, want %d bytes and %d files used, nothing reserved", qs, err, created*size, created)
	}
	if ids, err := e.ds.Store().Staged(ctx); err != nil || len(ids) != 0 {
		t.Errorf("%v left staged (%v)", ids, err)
	}
	objects := 0
	e.ds.Store().Walk(ctx, func(shoal.ObjectInfo) error { objects++; return nil })
	if objects != created {
		t.Errorf("%d objects on the data server for %d files: the refused PUTs' were not all removed", objects, created)
	}
}

// TestSettleLost: after a crash of a run that made deferred creates, md's
// start removes the entries that run committed for objects whose bytes
// never became durable (never acknowledged), and only those: not an
// acknowledged file, nor an older entry whose object is lost (fsck's to
// report); then the store is settled.
func TestSettleLost(t *testing.T) {
	e := newEnvLocal(t, DataAuto, true)
	ctx := context.Background()
	data := bytes.Repeat([]byte("acked "), 4000) // 24 KB: packed
	if r := e.put("/acked", data); r.status != 201 {
		t.Fatalf("local PUT: %v", r)
	}
	entry := func(path, object string, size int64, mtime time.Time) {
		t.Helper()
		c := &shoal.Commit{Size: size, MTime: mtime, Sums: shoal.Sums{Adler32: 1},
			Replicas: []shoal.Replica{{Server: e.ds.ID(), Object: object, Size: size, Sum: 1}}}
		if _, err := e.db.PutFile(ctx, path, shoal.DefaultLayout, c, shoal.Condition{}, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	entry("/lost", "1057", 10, time.Now())
	entry("/old", "01d", 10, time.Now().Add(-time.Hour))
	// Too large to have been created deferred: durable before its entry
	// was committed, so its missing object is a loss for fsck, not a
	// create the crash cut short.
	entry("/big", "b19", diskserver.MaxPackMax+1, time.Now())

	// The store as the next start opens it: the run above never stopped.
	st, err := diskserver.NewStore([]string{e.disk}, -1)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := st.Unsettled(); !ok {
		t.Fatal("the store of a run that did not stop is settled")
	}
	if err := settle.Lost(ctx, e.db, st, e.ds.ID(), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.Stat(ctx, "/lost"); !shoal.IsKind(err, shoal.KindNotFound) {
		t.Errorf("the never-durable create's entry: %v, want it removed", err)
	}
	for _, p := range []string{"/acked", "/old", "/big"} {
		if _, err := e.db.Stat(ctx, p); err != nil {
			t.Errorf("%s: %v, want it kept", p, err)
		}
	}
	if _, ok := st.Unsettled(); ok {
		t.Error("still unsettled after settling")
	}
	if r := e.get("/acked", nil); r.status != 200 || r.body != string(data) {
		t.Errorf("the acknowledged file: %d, %d bytes", r.status, len(r.body))
	}
}
