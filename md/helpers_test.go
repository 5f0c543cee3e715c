package md

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"shoal"
	"shoal/cache"
	"shoal/catalog"
	"shoal/diskserver"
	"shoal/sign"
	"shoal/tpc"
)

// env is a whole single-node system on loopback: a SQLite catalog in a
// temp dir behind the in-process cache, md, and one real data server.
type env struct {
	t     *testing.T
	db    *catalog.DB // the catalog itself, for assertions
	md    *Server
	url   string
	ds    *diskserver.Server
	dsURL string
	disk  string // the data server's directory
	keys  *sign.Keys
	http  *http.Client // does not follow redirects
	// dsLogs holds the data server's log and access lines (text).
	dsLogs *syncBuffer
}

func newEnv(t *testing.T, mode string, tweak ...func(*Options)) *env {
	t.Helper()
	return newEnvLocal(t, mode, false, tweak...)
}

// newEnvLocal is newEnv; with local, md has the data server's store as
// `shoal all` gives it (Options.LocalStore): it serves and writes that
// server's files itself.
func newEnvLocal(t *testing.T, mode string, local bool, tweak ...func(*Options)) *env {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	db, err := catalog.Open(ctx, catalog.Options{DSN: "sqlite:" + filepath.Join(dir, "catalog.db")})
	if err != nil {
		t.Fatal(err)
	}
	keys := sign.Random()
	tc, err := tpc.New(tpc.Options{AllowLocal: true, MarkerInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	mdLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, db: db, url: "http://" + mdLn.Addr().String(), keys: keys, disk: filepath.Join(dir, "disk"),
		http: &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}

	dsLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e.dsURL = "http://" + dsLn.Addr().String()
	e.dsLogs = &syncBuffer{}
	dsLog := slog.New(slog.NewTextHandler(e.dsLogs, nil))
	ds, err := diskserver.New(diskserver.Options{ID: "ds1", PublicURL: e.dsURL, Dirs: []string{e.disk},
		MDURL: e.url, Keys: keys, ReserveBytes: -1, HeartbeatInterval: time.Second, GarbageInterval: 200 * time.Millisecond,
		Logger: dsLog, AccessLog: dsLog, TPC: tc})
	if err != nil {
		t.Fatal(err)
	}
	e.ds = ds

	opts := Options{Catalog: cache.NewCatalog(db, cache.Options{L1: true}), Keys: keys, DataMode: mode, TPC: tc}
	if local {
		opts.LocalStore, opts.LocalServer = ds.Store(), ds.ID()
	}
	for _, f := range tweak {
		f(&opts)
	}
	m, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	e.md = m
	go m.Serve(mdLn)
	go ds.Serve(dsLn)
	t.Cleanup(func() {
		ds.Close()
		m.Close()
		db.Close()
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		servers, _ := db.Servers(ctx)
		if len(servers) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("data server did not register with md")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return e
}

// resp is a finished request.
type resp struct {
	status int
	h      http.Header
	body   string
}

// do sends a request to md (path relative to its URL, or an absolute URL).
func (e *env) do(method, path string, hdr map[string]string, body []byte) resp {
	e.t.Helper()
	u := path
	if !strings.HasPrefix(u, "http") {
		u = e.url + path
	}
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	raw := !strings.HasPrefix(path, "http") && (strings.Contains(path, "%") || strings.Contains(path, "."))
	if raw {
		u = e.url + "/"
	}
	req, err := http.NewRequest(method, u, r)
	if err != nil {
		e.t.Fatal(err)
	}
	if raw {
		req.URL.Opaque = path // keep the path as given: no cleaning, no re-escaping
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	res, err := e.http.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatalf("%s %s: reading body: %v", method, path, err)
	}
	return resp{res.StatusCode, res.Header, string(b)}
}

// want fails the test unless r has status (and, if reason is set, a body
// containing it).
func (r resp) want(t *testing.T, what string, status int, reason string) {
	t.Helper()
	if r.status != status {
		t.Errorf("%s: status %d, want %d (body %q)", what, r.status, status, r.body)
		return
	}
	if reason != "" && !strings.Contains(r.body, reason) {
		t.Errorf("%s: body %q, want it to contain %q", what, r.body, reason)
	}
}

// put stores data at path, following a 307 if md redirects.
func (e *env) put(path string, data []byte) resp {
	e.t.Helper()
	r := e.do("PUT", path, nil, data)
	if r.status == http.StatusTemporaryRedirect {
		r = e.do("PUT", r.h.Get("Location"), nil, data)
	}
	return r
}

// putChunked stores body at path with no Content-Length (chunked),
// following a 307 if md redirects; loc is where it was redirected ("" if
// not).
func (e *env) putChunked(path string, body []byte) (r resp, loc string) {
	e.t.Helper()
	send := func(url string) resp {
		req, err := http.NewRequest("PUT", url, io.MultiReader(bytes.NewReader(body)))
		if err != nil {
			e.t.Fatal(err)
		}
		req.ContentLength = -1
		res, err := e.http.Do(req)
		if err != nil {
			e.t.Fatalf("chunked PUT %s: %v", url, err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return resp{res.StatusCode, res.Header, string(b)}
	}
	if r = send(e.url + path); r.status == http.StatusTemporaryRedirect {
		loc = r.h.Get("Location")
		r = send(loc)
	}
	return r, loc
}

// get fetches path, following a 302 if md redirects.
func (e *env) get(path string, hdr map[string]string) resp {
	e.t.Helper()
	r := e.do("GET", path, hdr, nil)
	if r.status == http.StatusFound {
		r = e.do("GET", r.h.Get("Location"), hdr, nil)
	}
	return r
}

// snapshot describes the whole namespace (entries, versions, dead
// properties) and the objects on disk, staged ones included, to check
// that a refused request changed nothing.
func (e *env) snapshot() string {
	e.t.Helper()
	ctx := context.Background()
	var lines []string
	var walk func(string)
	walk = func(dir string) {
		kids, err := e.db.List(ctx, dir)
		if err != nil {
			e.t.Fatal(err)
		}
		for _, k := range kids {
			props, _ := e.db.Props(ctx, k.Path)
			lines = append(lines, k.Path+" "+k.ETag()+" "+propString(props))
			if k.IsDir {
				walk(k.Path)
			}
		}
	}
	walk("/")
	e.ds.Store().Walk(ctx, func(o shoal.ObjectInfo) error {
		lines = append(lines, "obj "+o.ID)
		return nil
	})
	// Objects md wrote staged and neither published nor removed: Walk
	// does not see them.
	staged, err := e.ds.Store().Staged(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, id := range staged {
		lines = append(lines, "staged "+id)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func propString(ps []shoal.Prop) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(p.Space + " " + p.Name + "=" + p.Value + ";")
	}
	return b.String()
}
