package diskserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/adler32"
	"strings"
	"testing"
	"time"

	"shoal"
	"shoal/sign"
	"shoal/storetest"
	"shoal/wire"
)

func TestPutWithUploadCommitsToMD(t *testing.T) {
	keys := sign.Random()
	md := startMD(t, keys)
	ts := startServer(t, Options{Keys: keys, MDURL: md.URL, ID: "disk-a"})
	data := storetest.Data(5, 70_000)

	st, hdr, body := do(t, "PUT", ts.signed("PUT", "aa01", "up1"), data, nil)
	if st != 201 || hdr.Get("ETag") != `"1-1"` {
		t.Fatalf("PUT with upload = %d %q, ETag %q; want 201 with md's ETag", st, body, hdr.Get("ETag"))
	}
	commits, _, _, _, _ := md.snapshot()
	if len(commits) != 1 {
		t.Fatalf("md got %d commits, want 1", len(commits))
	}
	c := commits[0]
	wantSum := adler32.Checksum(data)
	if c.Upload != "up1" || c.Size != int64(len(data)) || c.Adler32 != wire.FormatAdler32(wantSum) || len(c.MD5) != 32 {
		t.Errorf("commit = %+v", c)
	}
	if len(c.Replicas) != 1 || c.Replicas[0] != (wire.Replica{Server: "disk-a", Object: "aa01", Size: int64(len(data)), Sum: wantSum}) {
		t.Errorf("commit replicas = %+v", c.Replicas)
	}
	if _, err := ts.Store().Open(context.Background(), "aa01"); err != nil {
		t.Errorf("committed object missing: %v", err)
	}

	// md answers 204 for an overwrite: relayed.
	md.setCommit(204, "")
	if st, _, body := do(t, "PUT", ts.signed("PUT", "aa02", "up2"), data, nil); st != 204 {
		t.Errorf("PUT committed as overwrite = %d %q, want 204", st, body)
	}

	// The upload id is signed: changing it breaks the signature.
	u := strings.Replace(ts.signed("PUT", "aa03", "up3"), "up=up3", "up=up4", 1)
	if st, _, _ := do(t, "PUT", u, data, nil); st != 403 {
		t.Errorf("PUT with a tampered upload id = %d, want 403", st)
	}
}

// TestPutCallerCommits: a PUT whose URL leaves the commit to its sender
// (md streaming a client's body) stores the object and answers 201 with
// the commit it would have sent, and md gets no commit; even md refusing
// every commit changes nothing then.
func TestPutCallerCommits(t *testing.T) {
	keys := sign.Random()
	md := startMD(t, keys)
	md.setCommit(503, "no commit expected")
	ts := startServer(t, Options{Keys: keys, MDURL: md.URL, ID: "disk-c"})
	data := storetest.Data(6, 70_000)
	u := keys.CallerCommitsURLAs(ts.URL, "ca01", "up-c", "", int64(len(data)), time.Now().Add(time.Minute))
	st, _, body := do(t, "PUT", u, data, nil)
	if st != 201 {
		t.Fatalf("PUT whose caller commits = %d %q, want 201", st, body)
	}
	var c wire.CommitRequest
	if err := json.Unmarshal(body, &c); err != nil {
		t.Fatalf("answer %q: %v", body, err)
	}
	wantSum := adler32.Checksum(data)
	if c.Upload != "up-c" || c.Size != int64(len(data)) || c.Adler32 != wire.FormatAdler32(wantSum) ||
		len(c.Replicas) != 1 || c.Replicas[0] != (wire.Replica{Server: "disk-c", Object: "ca01", Size: int64(len(data)), Sum: wantSum}) {
		t.Errorf("answered commit = %+v", c)
	}
	if commits, _, _, _, _ := md.snapshot(); len(commits) != 0 {
		t.Errorf("md got %d commits, want none", len(commits))
	}
	if st, _, got := do(t, "GET", ts.signed("GET", "ca01", ""), nil, nil); st != 200 || !bytes.Equal(got, data) {
		t.Errorf("GET of the stored object = %d, %d bytes; want 200 and the body", st, len(got))
	}
	// The mark is signed: a URL without it is refused, and stores nothing.
	u2 := keys.CallerCommitsURLAs(ts.URL, "ca02", "up-c2", "", int64(len(data)), time.Now().Add(time.Minute))
	if st, _, _ := do(t, "PUT", strings.Replace(u2, "cc=1&", "", 1), data, nil); st != 403 {
		t.Errorf("PUT with the mark dropped = %d, want 403", st)
	}
	if st, _, _ := do(t, "GET", ts.signed("GET", "ca02", ""), nil, nil); st != 404 {
		t.Errorf("GET of the refused PUT's object = %d, want 404", st)
	}
	if commits, _, _, _, _ := md.snapshot(); len(commits) != 0 {
		t.Errorf("the refused PUT sent md %d commits", len(commits))
	}
}

func TestFailedCommitRemovesObject(t *testing.T) {
	keys := sign.Random()
	md := startMD(t, keys)
	ts := startServer(t, Options{Keys: keys, MDURL: md.URL})
	for _, c := range []struct {
		status int
		reason string
	}{{409, "parent missing"}, {412, "file exists"}, {503, "catalog down"}} {
		md.setCommit(c.status, c.reason)
		id := fmt.Sprintf("bb%d", c.status)
		st, hdr, body := do(t, "PUT", ts.signed("PUT", id, "up-"+id), []byte("data"), nil)
		if st != c.status || !strings.Contains(string(body), c.reason) {
			t.Errorf("PUT with md answering %d = %d %q; want md's status and reason relayed", c.status, st, body)
		}
		// The kind travels; a 503 tells the client when to retry, even
		// though this md (like a proxy) did not say.
		if kind := shoal.KindOf(wire.ResponseError("", "", c.status, func(string) string { return "" }, nil)); hdr.Get(wire.HeaderKind) != kind.String() {
			t.Errorf("PUT with md answering %d: %s %q, want %q", c.status, wire.HeaderKind, hdr.Get(wire.HeaderKind), kind)
		}
		if ra := hdr.Get("Retry-After"); (c.status == 503) != (ra != "") {
			t.Errorf("PUT with md answering %d: Retry-After %q", c.status, ra)
		}
		if _, err := ts.Store().Open(context.Background(), id); !shoal.IsKind(err, shoal.KindNotFound) {
			t.Errorf("after a %d commit the object is still there (Open: %v)", c.status, err)
		}
	}
}

func TestCommitWithMDDown(t *testing.T) {
	ts := startServer(t, Options{MDURL: "http://127.0.0.1:1"})
	st, hdr, _ := do(t, "PUT", ts.signed("PUT", "cc01", "up"), []byte("data"), nil)
	if st != 503 || hdr.Get("Retry-After") == "" || hdr.Get(wire.HeaderKind) != shoal.KindUnavailable.String() {
		t.Errorf("PUT with md unreachable = %d, Retry-After %q, %s %q; want 503 with Retry-After", st, hdr.Get("Retry-After"), wire.HeaderKind, hdr.Get(wire.HeaderKind))
	}
	if _, err := ts.Store().Open(context.Background(), "cc01"); !shoal.IsKind(err, shoal.KindNotFound) {
		t.Errorf("object left behind after a failed commit: %v", err)
	}
}

func TestHeartbeatAndGarbage(t *testing.T) {
	keys := sign.Random()
	md := startMD(t, keys)
	ts := startServer(t, Options{Keys: keys, MDURL: md.URL, ID: "disk-g", Pool: "fast",
		HeartbeatInterval: 20 * time.Millisecond, GarbageInterval: 20 * time.Millisecond})
	for _, id := range []string{"d1", "d2", "d3"} {
		if st, _, _ := do(t, "PUT", ts.signed("PUT", id, ""), []byte(id), nil); st != 201 {
			t.Fatalf("PUT %s = %d", id, st)
		}
	}
	md.mu.Lock()
	md.garbage = []wire.GarbageItem{{ID: 1, Object: "d1"}, {ID: 2, Object: "d2"}, {ID: 3, Object: "0feed"}, {ID: 4, Object: "../bad"}}
	md.mu.Unlock()

	// Wait (bounded) for the loops to do their work; the assertions are on
	// what happened, not on when.
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, hbs, _, left, _ := md.snapshot()
		if len(hbs) >= 2 && left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 10s: %d heartbeats, %d garbage items not acknowledged", len(hbs), left)
		}
		time.Sleep(10 * time.Millisecond)
	}
	_, hbs, acked, _, badSigs := md.snapshot()
	hb := hbs[0]
	if hb.ID != "disk-g" || hb.URL != ts.URL || hb.Pool != "fast" || hb.Total <= 0 || hb.Free < 0 {
		t.Errorf("heartbeat = %+v", hb)
	}
	if len(acked) != 4 || badSigs != 0 {
		t.Errorf("acknowledged %v (bad signatures %d), want all 4 items", acked, badSigs)
	}
	ctx := context.Background()
	for id, want := range map[string]bool{"d1": false, "d2": false, "d3": true} {
		_, err := ts.Store().Open(ctx, id)
		if got := err == nil; got != want {
			t.Errorf("%s present = %v, want %v (err %v)", id, got, want, err)
		}
	}
	// Close stops the loops: no heartbeat after it returns.
	ts.Close()
	_, before, _, _, _ := md.snapshot()
	time.Sleep(100 * time.Millisecond)
	if _, after, _, _, _ := md.snapshot(); len(after) != len(before) {
		t.Errorf("%d heartbeats after Close", len(after)-len(before))
	}
}

func TestServerIDPersisted(t *testing.T) {
	dir := t.TempDir()
	keys := sign.Random()
	// Close works on a server that never served (and frees its data
	// directory for the next).
	closed := func(s *Server) *Server {
		t.Helper()
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		return s
	}
	a, err := New(Options{Dirs: []string{dir}, Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	closed(a)
	b, err := New(Options{Dirs: []string{dir}, Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	closed(b)
	if a.ID() == "" || a.ID() != b.ID() {
		t.Errorf("server ids %q and %q, want one non-empty id kept in the data dir", a.ID(), b.ID())
	}
	c, _ := New(Options{Dirs: []string{t.TempDir()}, Keys: keys})
	if closed(c).ID() == a.ID() {
		t.Errorf("two data dirs got the same random id %q", a.ID())
	}
	if d, _ := New(Options{Dirs: []string{dir}, Keys: keys, ID: "given"}); closed(d).ID() != "given" {
		t.Errorf("ID from options = %q, want %q", d.ID(), "given")
	}
}
