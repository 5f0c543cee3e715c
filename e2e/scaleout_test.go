package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"shoal/internal/testsvc"
)

// The scale-out stack of issue 3 as an operator runs it: one MariaDB, one
// memcached, several `shoal md` and one `shoal disk`, all real processes.
type stack struct {
	maria  *testsvc.MariaDBProcess
	mc     *testsvc.MemcachedProcess
	secret string
	a, b   *proc // two md over the same catalog and memcached (L1 off)
	disk   *proc
}

func startStack(t *testing.T) *stack {
	t.Helper()
	s := &stack{maria: testsvc.StartMariaDB(t), mc: testsvc.StartMemcached(t)}
	s.secret = writeSecret(t, "k1 0123456789abcdef0123456789abcdef\n")
	env := []string{"SHOAL_MD_DATA_MODE=proxy"}
	s.a = startMD(t, s.maria.DSN, s.mc.Addr, s.secret, env)
	s.b = startMD(t, s.maria.DSN, s.mc.Addr, s.secret, env)
	s.disk = startDisk(t, s.a.URL, s.secret)
	return s
}

// sqlDB opens the stack's catalog database directly, to check rows.
func (s *stack) sqlDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", fmt.Sprintf("shoal:shoal-test@tcp(127.0.0.1:%d)/shoal", s.maria.Port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// want checks one request's status (and, when given, its body).
func want(t *testing.T, method, url string, status int, header ...string) reply {
	t.Helper()
	got := do(method, url, "", header...)
	if got.status != status {
		t.Errorf("%s %s = %v, want %d", method, url, got, status)
	}
	return got
}

func mustDo(t *testing.T, status int, method, url, body string, header ...string) {
	t.Helper()
	if got := do(method, url, body, header...); got.status != status {
		t.Fatalf("%s %s = %v, want %d", method, url, got, status)
	}
}

// Every mutation kind done through md A is seen at once through md B,
// which had the old state cached in memcached (each check through B is
// first made before the mutation, so B's answer is in the cache).
func TestScaleOutCoherence(t *testing.T) {
	s := startStack(t)
	A, B := s.a.URL, s.b.URL
	big := strings.Repeat("0123456789abcdef", 512) // 8 KiB: stored on the data server, not inline

	// File create.
	cached(t, "HEAD", B+"/f", 404)
	mustDo(t, 201, "PUT", A+"/f", "v1")
	if got := want(t, "HEAD", B+"/f", 200); got.header.Get("Content-Length") != "2" {
		t.Errorf("HEAD /f through B: Content-Length %q, want 2", got.header.Get("Content-Length"))
	}
	// Overwrite (inline → inline, inline → data server).
	cached(t, "HEAD", B+"/f", 200)
	mustDo(t, 204, "PUT", A+"/f", "version2")
	if got := want(t, "GET", B+"/f", 200); got.body != "version2" {
		t.Errorf("GET /f through B after overwrite = %q", got.body)
	}
	mustDo(t, 204, "PUT", A+"/f", big)
	if got := want(t, "GET", B+"/f", 200); got.body != big {
		t.Errorf("GET /f through B after overwrite with 8 KiB: %d bytes", len(got.body))
	}
	// Delete.
	cached(t, "HEAD", B+"/f", 200)
	mustDo(t, 204, "DELETE", A+"/f", "")
	want(t, "HEAD", B+"/f", 404)
	want(t, "GET", B+"/f", 404)

	// Directory create; a file under a path that was "not found".
	cached(t, "PROPFIND", B+"/t/", 404, "Depth", "0")
	cached(t, "HEAD", B+"/t/a/b/c/file", 404) // parent missing
	for _, d := range []string{"/t/", "/t/a/", "/t/a/b/", "/t/a/b/c/"} {
		mustDo(t, 201, "MKCOL", A+d, "")
	}
	want(t, "PROPFIND", B+"/t/", 207, "Depth", "0")
	cached(t, "HEAD", B+"/t/a/b/c/file", 404)
	mustDo(t, 201, "PUT", A+"/t/a/b/c/file", "deep")
	mustDo(t, 201, "PUT", A+"/t/a/x", big)

	// Subtree rename: B has cached old paths as present and new ones as
	// missing, at every depth.
	old := []string{"/t/a/b/c/file", "/t/a/x"}
	moved := []string{"/u/a/b/c/file", "/u/a/x"}
	for _, p := range old {
		cached(t, "HEAD", B+p, 200)
	}
	for _, p := range moved {
		cached(t, "HEAD", B+p, 404)
	}
	cached(t, "PROPFIND", B+"/t/a/b/", 207, "Depth", "1")
	mustDo(t, 201, "MOVE", A+"/t/", "", "Destination", A+"/u/")
	for _, p := range old {
		want(t, "HEAD", B+p, 404)
	}
	for _, p := range moved {
		want(t, "HEAD", B+p, 200)
	}
	want(t, "PROPFIND", B+"/t/a/b/", 404, "Depth", "1")
	if got := want(t, "GET", B+"/u/a/b/c/file", 200); got.body != "deep" {
		t.Errorf("GET moved file through B = %q", got.body)
	}
	if got := want(t, "PROPFIND", B+"/u/a/", 207, "Depth", "1"); !strings.Contains(got.body, "/u/a/b/") || !strings.Contains(got.body, "/u/a/x") {
		t.Errorf("PROPFIND /u/a/ through B does not list b/ and x:\n%s", got.body)
	}

	// Directory COPY: B has cached the destination as missing.
	cached(t, "HEAD", B+"/v/a/b/c/file", 404)
	mustDo(t, 201, "COPY", A+"/u/", "", "Destination", A+"/v/")
	want(t, "HEAD", B+"/v/a/b/c/file", 200)
	if got := want(t, "GET", B+"/v/a/x", 200); got.body != big {
		t.Errorf("GET copied 8 KiB file through B: %d bytes", len(got.body))
	}
	want(t, "HEAD", B+"/u/a/b/c/file", 200)

	// File MOVE and COPY.
	cached(t, "HEAD", B+"/u/a/x", 200)
	cached(t, "HEAD", B+"/u/a/y", 404)
	cached(t, "HEAD", B+"/u/a/z", 404)
	mustDo(t, 201, "MOVE", A+"/u/a/x", "", "Destination", A+"/u/a/y")
	mustDo(t, 201, "COPY", A+"/u/a/b/c/file", "", "Destination", A+"/u/a/z")
	want(t, "HEAD", B+"/u/a/x", 404)
	want(t, "HEAD", B+"/u/a/y", 200)
	if got := want(t, "GET", B+"/u/a/z", 200); got.body != "deep" {
		t.Errorf("GET copied file through B = %q", got.body)
	}

	// MOVE over an existing directory (Overwrite: T) replaces its subtree.
	mustDo(t, 201, "MKCOL", A+"/w/", "")
	mustDo(t, 201, "PUT", A+"/w/only-in-w", "w")
	cached(t, "HEAD", B+"/w/only-in-w", 200)
	cached(t, "HEAD", B+"/w/a/y", 404)
	mustDo(t, 204, "MOVE", A+"/u/", "", "Destination", A+"/w/", "Overwrite", "T")
	want(t, "HEAD", B+"/w/only-in-w", 404)
	want(t, "HEAD", B+"/w/a/y", 200)
	want(t, "HEAD", B+"/u/a/y", 404)

	// Subtree delete.
	cached(t, "HEAD", B+"/v/a/b/c/file", 200)
	cached(t, "PROPFIND", B+"/v/a/", 207, "Depth", "1")
	mustDo(t, 204, "DELETE", A+"/v/", "")
	want(t, "HEAD", B+"/v/a/b/c/file", 404)
	want(t, "PROPFIND", B+"/v/a/", 404, "Depth", "1")

	// Dead properties.
	cached(t, "PROPFIND", B+"/w/a/y", 207, "Depth", "0")
	mustDo(t, 207, "PROPPATCH", A+"/w/a/y", `<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:z"><D:set><D:prop><Z:colour>blue</Z:colour></D:prop></D:set></D:propertyupdate>`)
	if got := want(t, "PROPFIND", B+"/w/a/y", 207, "Depth", "0"); !strings.Contains(got.body, "blue") {
		t.Errorf("PROPFIND through B after PROPPATCH through A lacks the new property:\n%s", got.body)
	}

}

// cached makes a request through md B twice and checks that the second
// answer came from memcached (B's hit counter grew), so that the check
// after the mutation is made against a warm cache.
func cached(t *testing.T, method, url string, status int, header ...string) {
	t.Helper()
	base := url[:strings.Index(url[len("http://"):], "/")+len("http://")]
	want(t, method, url, status, header...)
	hits := metric(t, base, `shoal_cache_lookups_total{tier="l2",result="hit"}`)
	want(t, method, url, status, header...)
	if now := metric(t, base, `shoal_cache_lookups_total{tier="l2",result="hit"}`); now <= hits {
		t.Errorf("%s %s twice: no memcached hit the second time (%v then %v)", method, url, hits, now)
	}
}

// metric reads one sample from an md's /.shoal/metrics.
func metric(t *testing.T, base, series string) float64 {
	t.Helper()
	got := do("GET", base+"/.shoal/metrics", "")
	for _, line := range strings.Split(got.body, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			var f float64
			fmt.Sscan(v, &f)
			return f
		}
	}
	t.Errorf("%s not in %s/.shoal/metrics", series, base)
	return 0
}

// With the in-process tier on, an md answers from its own memory for at
// most its TTL: after a change made through another md and one TTL, it
// answers the new state.
func TestScaleOutL1Staleness(t *testing.T) {
	s := startStack(t)
	const ttl = time.Second
	c := startMD(t, s.maria.DSN, s.mc.Addr, s.secret,
		[]string{"SHOAL_CACHE_L1=on", "SHOAL_CACHE_L1_TTL=" + ttl.String()})
	A, C := s.a.URL, c.URL
	mustDo(t, 201, "MKCOL", A+"/d/", "")
	mustDo(t, 201, "PUT", A+"/d/f", "one")
	want(t, "HEAD", C+"/d/f", 200)
	want(t, "HEAD", C+"/e/f", 404)
	mustDo(t, 201, "MOVE", A+"/d/", "", "Destination", A+"/e/")
	time.Sleep(ttl + 200*time.Millisecond)
	want(t, "HEAD", C+"/d/f", 404)
	want(t, "HEAD", C+"/e/f", 200)
	mustDo(t, 204, "DELETE", A+"/e/f", "")
	time.Sleep(ttl + 200*time.Millisecond)
	want(t, "HEAD", C+"/e/f", 404)
}

// Concurrent creates of one path through two md: exactly one wins, the
// other gets a clear error (MKCOL 405, PUT If-None-Match: * 412), and the
// catalog holds one row per path.
func TestScaleOutConcurrentCreate(t *testing.T) {
	s := startStack(t)
	const rounds = 20
	for _, kind := range []struct {
		name, method, suffix, body string
		header                     []string
		loser                      int
	}{
		{"MKCOL", "MKCOL", "/", "", nil, 405},
		{"PUT", "PUT", "", "data", []string{"If-None-Match", "*"}, 412},
	} {
		for i := range rounds {
			path := fmt.Sprintf("/%s-%d%s", kind.name, i, kind.suffix)
			var wg sync.WaitGroup
			got := make([]reply, 2)
			start := make(chan struct{})
			for j, u := range []string{s.a.URL, s.b.URL} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					got[j] = do(kind.method, u+path, kind.body, kind.header...)
				}()
			}
			close(start)
			wg.Wait()
			wins, losses := 0, 0
			for _, r := range got {
				switch r.status {
				case 201:
					wins++
				case kind.loser:
					losses++
				}
			}
			if wins != 1 || losses != 1 {
				t.Errorf("%s %s from both md: %v and %v, want one 201 and one %d", kind.method, path, got[0], got[1], kind.loser)
			}
		}
	}
	var dups int
	if err := s.sqlDB(t).QueryRowContext(context.Background(),
		`SELECT COUNT(*) FROM (SELECT path FROM entries GROUP BY path HAVING COUNT(*) > 1) d`).Scan(&dups); err != nil {
		t.Fatal(err)
	}
	if dups != 0 {
		t.Errorf("%d paths have more than one row", dups)
	}
}

// kill -9 of memcached during a HEAD load against both md: every request
// is answered (from SQL while memcached is gone), none fails.
func TestScaleOutMemcachedKilled(t *testing.T) {
	s := startStack(t)
	const files = 50
	mustDo(t, 201, "MKCOL", s.a.URL+"/load/", "")
	for i := range files {
		mustDo(t, 201, "PUT", fmt.Sprintf("%s/load/f%d", s.a.URL, i), "x")
	}
	var sent, failed atomic.Int64
	var firstFail atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	deadline := time.Now().Add(20 * time.Second) // bound even if the killer stalls
	for w := range 8 {
		base := []string{s.a.URL, s.b.URL}[w%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20000 && time.Now().Before(deadline); i++ {
				select {
				case <-stop:
					return
				default:
				}
				got := do("HEAD", fmt.Sprintf("%s/load/f%d", base, (i*7+w)%files), "")
				sent.Add(1)
				if got.status != 200 {
					failed.Add(1)
					firstFail.CompareAndSwap(nil, got.String())
				}
			}
		}()
	}
	waitSent := func(n int64) {
		for sent.Load() < n && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitSent(500)
	s.mc.Kill()
	at := sent.Load()
	waitSent(at + 1000)
	s.mc.Restart()
	at = sent.Load()
	waitSent(at + 1000)
	close(stop)
	wg.Wait()
	t.Logf("%d HEADs, %d failed", sent.Load(), failed.Load())
	if failed.Load() != 0 {
		t.Errorf("%d of %d HEADs failed while memcached was killed and restarted; first: %v", failed.Load(), sent.Load(), firstFail.Load())
	}
	if sent.Load() < 2500 {
		t.Errorf("only %d HEADs were answered in time", sent.Load())
	}
}

// A lock taken through md A is enforced by md B at once, although B had
// just found (and recorded in memcached) that no lock existed; the lock's
// token lets a write through B, and an UNLOCK through B frees the path for
// A. Every refusal leaves the file as it was.
func TestScaleOutLocks(t *testing.T) {
	s := startStack(t)
	A, B := s.a.URL, s.b.URL
	const lockinfo = `<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope>` +
		`<D:locktype><D:write/></D:locktype><D:owner>e2e</D:owner></D:lockinfo>`
	mustDo(t, 201, "PUT", A+"/lk", "v1")
	for range 3 { // B's lock checks find none, then answer from that finding
		mustDo(t, 204, "PUT", B+"/lk", "v2")
	}
	r := do("LOCK", A+"/lk", lockinfo, "Timeout", "Second-600")
	token := r.header.Get("Lock-Token")
	if r.status != 200 || !strings.HasPrefix(token, "<opaquelocktoken:") {
		t.Fatalf("LOCK through A = %v, Lock-Token %q", r, token)
	}
	want(t, "PUT", B+"/lk", 423)
	want(t, "DELETE", B+"/lk", 423)
	if got := want(t, "GET", B+"/lk", 200); got.body != "v2" {
		t.Fatalf("GET through B after refused writes = %q, want v2", got.body)
	}
	mustDo(t, 204, "PUT", B+"/lk", "v3", "If", "("+token+")")
	mustDo(t, 204, "UNLOCK", B+"/lk", "", "Lock-Token", token)
	mustDo(t, 204, "PUT", A+"/lk", "v4")
	if got := want(t, "GET", B+"/lk", 200); got.body != "v4" {
		t.Fatalf("GET through B after UNLOCK = %q, want v4", got.body)
	}
}

// A pool mapping made through md A is followed by md B's next create,
// though B had found in memcached that no directory was mapped: the
// mapping's commit replaces that finding's generation. (The pool needs two
// data servers; the stack has one, so a create under it is refused and
// leaves nothing.)
func TestScaleOutPools(t *testing.T) {
	s := startStack(t)
	A, B := s.a.URL, s.b.URL
	body := strings.Repeat("pool ", 20_000) // 100 KB: not inline
	mustDo(t, 201, "MKCOL", B+"/p", "")
	for i := range 3 { // B finds no mapping, then answers from that finding
		mustDo(t, 201, "PUT", fmt.Sprintf("%s/p/f%d", B, i), body)
	}
	admin := func(args ...string) {
		t.Helper()
		out, code := run(t, t.TempDir(), nil, shoalBin, append([]string{"admin", "--md", A, "--secret-file", s.secret}, args...)...)
		if code != 0 {
			t.Fatalf("admin %v: exit %d\n%s", args, code, out)
		}
	}
	admin("pool", "add", "two", "replica:2")
	mustDo(t, 201, "MKCOL", A+"/two", "")
	admin("pool", "set", "/two", "two")
	if r := do("PUT", B+"/two/f", body); r.status < 500 {
		t.Errorf("PUT through B under /two (replica:2, one data server) = %v, want a 5xx", r)
	}
	want(t, "HEAD", A+"/two/f", 404)
	mustDo(t, 201, "PUT", B+"/p/f9", body)
}
