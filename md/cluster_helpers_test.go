package md

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"shoal"
	"shoal/cache"
	"shoal/catalog"
	"shoal/diskserver"
	"shoal/gw"
	"shoal/sign"
	"shoal/storetest"
	"shoal/wire"
)

// cluster is md (a redirect and a proxy frontend over one SQLite catalog),
// real diskservers in pools and a real gw, all on loopback ports; a data
// server is killed by closing it and revived on the same port and dir.
type cluster struct {
	t        *testing.T
	keys     *sign.Keys
	db       *catalog.DB
	redirect *Server
	proxy    *Server
	rURL     string // redirect md
	pURL     string // proxy md
	disks    map[string]*cdisk
	gw       *gw.Server
	gwURL    string
	wc       *wire.Client
}

type cdisk struct {
	id, pool, dir, addr string
	srv                 *diskserver.Server
	done                chan error
}

const (
	clusterTTL = 1500 * time.Millisecond // ServerTTL: a killed server is dead to md after this
	beat       = 150 * time.Millisecond
)

func newCluster(t *testing.T, tweak ...func(*Options)) *cluster {
	t.Helper()
	c := &cluster{t: t, keys: sign.Random(), disks: map[string]*cdisk{}}
	db, err := catalog.Open(context.Background(), catalog.Options{DSN: "sqlite:" + filepath.Join(t.TempDir(), "catalog.db")})
	if err != nil {
		t.Fatal(err)
	}
	c.db = db
	cat := cache.NewCatalog(db, cache.Options{L1: true})
	t.Cleanup(func() { db.Close() })
	serve := func(mode string) (*Server, string) {
		opts := Options{Catalog: cat, Keys: c.keys, DataMode: mode, ServerTTL: clusterTTL, URLTTL: 2 * time.Second, AllowPoolProppatch: true}
		for _, f := range tweak {
			f(&opts)
		}
		s, err := New(opts)
		if err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go s.Serve(ln)
		t.Cleanup(func() { s.Close() })
		return s, "http://" + ln.Addr().String()
	}
	c.redirect, c.rURL = serve(DataRedirect)
	c.proxy, c.pURL = serve(DataProxy)
	c.wc = wire.NewClient(c.rURL, c.keys)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c.gwURL = "http://" + ln.Addr().String()
	g, err := gw.NewServer(gw.ServerOptions{ID: "gw0", PublicURL: c.gwURL, MDURL: c.rURL, Keys: c.keys,
		StripeSize: 64 << 10, HeartbeatInterval: beat, RefreshInterval: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	c.gw = g
	go g.Serve(ln)
	t.Cleanup(func() { g.Close() })
	return c
}

// addDisks starts n data servers of pool, named pool-0 … pool-(n-1).
func (c *cluster) addDisks(pool string, n int) []string {
	var ids []string
	for i := range n {
		d := &cdisk{id: fmt.Sprintf("%s-%d", pool, i), pool: pool, dir: c.t.TempDir(), addr: "127.0.0.1:0"}
		c.disks[d.id] = d
		c.start(d.id)
		ids = append(ids, d.id)
	}
	c.t.Cleanup(func() {
		for _, id := range ids {
			c.kill(id)
		}
	})
	c.waitLive(ids...)
	return ids
}

func (c *cluster) start(id string) {
	t, d := c.t, c.disks[id]
	var ln net.Listener
	var err error
	for range 100 { // the port may linger briefly after a kill
		if ln, err = net.Listen("tcp", d.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	d.addr = ln.Addr().String()
	srv, err := diskserver.New(diskserver.Options{ID: d.id, Dirs: []string{d.dir}, Keys: c.keys, PublicURL: "http://" + d.addr,
		MDURL: c.rURL, Pool: d.pool, HeartbeatInterval: beat, GarbageInterval: 200 * time.Millisecond, ReserveBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	d.srv, d.done = srv, make(chan error, 1)
	go func() { d.done <- srv.Serve(ln) }()
	// Wait until it answers: a Close before Serve took the listener would
	// leave Serve running.
	for range 200 {
		if resp, err := http.Get("http://" + d.addr + "/"); err == nil {
			resp.Body.Close()
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("data server %s does not answer", id)
}

func (c *cluster) kill(ids ...string) {
	for _, id := range ids {
		if d := c.disks[id]; d.srv != nil {
			d.srv.Close()
			<-d.done
			d.srv = nil
		}
	}
}

// waitLive waits until md's catalog has a fresh heartbeat of every id.
func (c *cluster) waitLive(ids ...string) {
	c.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		servers, err := c.db.Servers(context.Background())
		if err != nil {
			c.t.Fatal(err)
		}
		live := map[string]bool{}
		for _, s := range servers {
			live[s.ID] = s.Live(time.Now(), clusterTTL/2)
		}
		all := live["gw0"]
		for _, id := range ids {
			all = all && live[id]
		}
		if all {
			time.Sleep(placementRefreshForTests)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.t.Fatalf("servers %v never live", ids)
}

// waitDead waits until md no longer counts ids as live.
func (c *cluster) waitDead(ids ...string) {
	time.Sleep(clusterTTL + placementRefreshForTests + 100*time.Millisecond)
}

const placementRefreshForTests = placementRefresh + 50*time.Millisecond

// admin calls a signed admin endpoint.
func (c *cluster) admin(path string, req, reply any) {
	c.t.Helper()
	st, err := c.wc.Call(path, req, reply)
	if err != nil || st >= 300 {
		c.t.Fatalf("admin %s: %d %v", path, st, err)
	}
}

// pool creates pool with layout and maps dir (created) to it.
func (c *cluster) pool(name, layout, dir string) {
	c.t.Helper()
	c.admin(wire.PathAdminPoolAdd, wire.PoolAddRequest{Name: name, Layout: layout}, nil)
	if st, _ := c.do("MKCOL", c.rURL, dir, nil, nil); st != 201 {
		c.t.Fatalf("MKCOL %s: %d", dir, st)
	}
	c.admin(wire.PathAdminPoolSet, wire.PoolSetRequest{Dir: dir, Pool: name}, nil)
}

var httpClient = &http.Client{Timeout: 60 * time.Second}

// do sends a request (following redirects, with the body re-sent on 307).
func (c *cluster) do(method, base, path string, hdr map[string]string, body []byte) (int, []byte) {
	c.t.Helper()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, base+path, r)
	if err != nil {
		c.t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// mustGet GETs path through both frontends and compares the bytes (and a
// Range) with want.
func (c *cluster) mustGet(path string, want []byte) {
	c.t.Helper()
	for _, base := range []string{c.rURL, c.pURL} {
		st, got := c.do("GET", base, path, nil, nil)
		if st != 200 || !bytes.Equal(got, want) {
			c.t.Fatalf("GET %s via %s: %d, %d bytes, equal %v: %.200s", path, base, st, len(got), bytes.Equal(got, want), got)
		}
		off, n := len(want)/3, len(want)/4
		st, got = c.do("GET", base, path, map[string]string{"Range": fmt.Sprintf("bytes=%d-%d", off, off+n-1)}, nil)
		if st != 206 || !bytes.Equal(got, want[off:off+n]) {
			c.t.Fatalf("Range GET %s via %s: %d, equal %v", path, base, st, bytes.Equal(got, want[off:off+n]))
		}
	}
}

// objectFile finds the file of object id in a disk's data dir.
func (c *cluster) objectFile(server, object string) string {
	c.t.Helper()
	var found string
	dir := c.disks[server].dir
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() && e.Name() == object && !strings.Contains(p[len(dir):], "tmp") {
			found = p
		}
		return nil
	})
	if found == "" {
		c.t.Fatalf("no file for %s on %s", object, server)
	}
	return found
}

// objects lists the objects a disk holds (Walk of its store).
func (c *cluster) objects(server string) []string {
	c.t.Helper()
	st, err := diskserver.NewStore([]string{c.disks[server].dir}, -1)
	if err != nil {
		c.t.Fatal(err)
	}
	var out []string
	st.Walk(context.Background(), func(oi shoal.ObjectInfo) error {
		out = append(out, oi.ID)
		return nil
	})
	return out
}

func flip(t *testing.T, path string, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 64)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	for i := range b {
		b[i] ^= 0x5a
	}
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

// putECFiles writes a multi-stripe file /ec/a through the redirect md and a
// one-stripe file /ec/b through the proxy md, and returns their contents.
func (c *cluster) putECFiles() map[string][]byte {
	c.t.Helper()
	files := map[string][]byte{
		"/ec/a": storetest.Data(1, 1<<20+12345), // 17 stripes of 64 KiB
		"/ec/b": storetest.Data(2, 5000),
	}
	if st, body := c.do("PUT", c.rURL, "/ec/a", nil, files["/ec/a"]); st != 201 {
		c.t.Fatalf("PUT via redirect: %d %s", st, body)
	}
	if st, body := c.do("PUT", c.pURL, "/ec/b", nil, files["/ec/b"]); st != 201 {
		c.t.Fatalf("PUT via proxy: %d %s", st, body)
	}
	return files
}

// entry is path's entry in the catalog.
func (c *cluster) entry(path string) *shoal.Entry {
	c.t.Helper()
	e, err := c.db.Stat(context.Background(), path)
	if err != nil {
		c.t.Fatal(err)
	}
	return e
}
