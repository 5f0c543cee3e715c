// Package testsystem runs a whole shoal on loopback for tests: a SQLite
// catalog behind the in-process cache, two md frontends (redirect and
// proxy) with a job runner beside each (as cmd/shoal runs them), real
// diskservers in pools and a real gw. A data server is killed by closing
// it and revived on the same port and dir. Test support only.
package testsystem

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"shoal"
	"shoal/cache"
	"shoal/catalog"
	"shoal/diskserver"
	"shoal/diskserver/remote"
	"shoal/gw"
	"shoal/jobs"
	"shoal/md"
	"shoal/placement"
	"shoal/sign"
	"shoal/tpc"
	"shoal/wire"
)

// Cluster is the system; its fields are for tests to look inside.
type Cluster struct {
	T        *testing.T
	Keys     *sign.Keys
	DB       *catalog.DB    // the catalog itself, for assertions
	Cat      *cache.Catalog // what md and the runners use: DB behind the cache
	Redirect *md.Server
	Proxy    *md.Server
	RURL     string // redirect md
	PURL     string // proxy md
	Runners  []*jobs.Runner
	Disks    map[string]*Disk
	GW       *gw.Server
	GWURL    string
	WC       *wire.Client  // signed, to the redirect md
	TTL      time.Duration // md's ServerTTL (TTL unless a tweak changed it)
	// TPC is the third-party copy client of md, the data servers and the
	// gw: loopback allowed (the peers are there), a marker every 50 ms.
	TPC *tpc.Client
}

// Disk is one data server of the cluster.
type Disk struct {
	ID, Pool, Dir, Addr string
	srv                 *diskserver.Server
	done                chan error
}

// TTL is md's ServerTTL: a killed server is dead to md after this. The
// ARM test runs go through qemu-user, ten to thirty times slower, where
// heartbeats every Beat come late: there live servers get a longer TTL.
var TTL = map[bool]time.Duration{false: 1500 * time.Millisecond, true: 5 * time.Second}[runtime.GOARCH == "arm" || runtime.GOARCH == "arm64"]

const (
	// Beat is the heartbeat of the data servers and the gw.
	Beat = 150 * time.Millisecond
	// URLTTL is md's signed-URL lifetime and garbage grace.
	URLTTL = 2 * time.Second
	// Lease is the runners' job lease.
	Lease = 2 * time.Second
	// JobInterval is the runners' heartbeat and polling interval.
	JobInterval = 200 * time.Millisecond
	// PlacementRefresh is md's, with a margin: after a change of the
	// server table, md places by it within this.
	PlacementRefresh = placement.Refresh + 50*time.Millisecond
)

// New starts the catalog, both md, their runners and the gw; tweak
// changes the md options.
func New(t *testing.T, tweak ...func(*md.Options)) *Cluster {
	t.Helper()
	c := &Cluster{T: t, Keys: sign.Random(), Disks: map[string]*Disk{}}
	tc, err := tpc.New(tpc.Options{AllowLocal: true, MarkerInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	c.TPC = tc
	db, err := catalog.Open(context.Background(), catalog.Options{DSN: "sqlite:" + filepath.Join(t.TempDir(), "catalog.db")})
	if err != nil {
		t.Fatal(err)
	}
	c.DB = db
	c.Cat = cache.NewCatalog(db, cache.Options{L1: true})
	t.Cleanup(func() { db.Close() })
	serve := func(mode string) (*md.Server, string) {
		opts := md.Options{Catalog: c.Cat, Keys: c.Keys, DataMode: mode, ServerTTL: TTL, URLTTL: URLTTL,
			AllowPoolProppatch: true, ProgressInterval: 20 * time.Millisecond, TPC: c.TPC}
		for _, f := range tweak {
			f(&opts)
		}
		c.TTL = opts.ServerTTL
		s, err := md.New(opts)
		if err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go s.Serve(ln)
		t.Cleanup(func() { s.Close() })
		r := c.NewRunner(mode)
		t.Cleanup(func() { r.Close() })
		c.Runners = append(c.Runners, r)
		return s, "http://" + ln.Addr().String()
	}
	c.Redirect, c.RURL = serve(md.DataRedirect)
	c.Proxy, c.PURL = serve(md.DataProxy)
	c.WC = wire.NewClient(c.RURL, c.Keys)
	c.WC.Timeout = time.Minute
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c.GWURL = "http://" + ln.Addr().String()
	g, err := gw.NewServer(gw.ServerOptions{ID: "gw0", PublicURL: c.GWURL, MDURL: c.RURL, Keys: c.Keys,
		StripeSize: 64 << 10, HeartbeatInterval: Beat, RefreshInterval: 300 * time.Millisecond, TPC: c.TPC})
	if err != nil {
		t.Fatal(err)
	}
	c.GW = g
	go g.Serve(ln)
	t.Cleanup(func() { g.Close() })
	return c
}

// Env is what the cluster's jobs run over.
func (c *Cluster) Env() jobs.Env {
	return jobs.Env{Catalog: c.Cat, Store: func(sv shoal.Server) shoal.BlobStore { return remote.New(sv.URL, c.Keys) },
		ServerTTL: TTL, Grace: URLTTL, PlacementStale: placement.Refresh}
}

// NewRunner starts another job runner over the cluster's catalog, with
// the test lease and interval; the caller closes it.
func (c *Cluster) NewRunner(id string) *jobs.Runner {
	r, err := jobs.NewRunner(jobs.RunnerOptions{ID: id, Jobs: c.Cat, Env: c.Env(), Lease: Lease, Interval: JobInterval})
	if err != nil {
		c.T.Fatal(err)
	}
	r.Start()
	return r
}

// StopRunners closes the cluster's runners, for a test that runs its own.
func (c *Cluster) StopRunners() {
	for _, r := range c.Runners {
		r.Close()
	}
}

// AddDisks starts n data servers of pool, named pool-0 … pool-(n-1).
func (c *Cluster) AddDisks(pool string, n int) []string {
	var ids []string
	for i := range n {
		d := &Disk{ID: fmt.Sprintf("%s-%d", pool, i), Pool: pool, Dir: c.T.TempDir(), Addr: "127.0.0.1:0"}
		c.Disks[d.ID] = d
		c.Start(d.ID)
		ids = append(ids, d.ID)
	}
	c.T.Cleanup(func() { c.Kill(ids...) })
	c.WaitLive(ids...)
	return ids
}

// Start starts data server id (again, on its port and dir).
func (c *Cluster) Start(id string) {
	t, d := c.T, c.Disks[id]
	var ln net.Listener
	var err error
	for range 100 { // the port may linger briefly after a kill
		if ln, err = net.Listen("tcp", d.Addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	d.Addr = ln.Addr().String()
	srv, err := diskserver.New(diskserver.Options{ID: d.ID, Dirs: []string{d.Dir}, Keys: c.Keys, PublicURL: "http://" + d.Addr,
		MDURL: c.RURL, Pool: d.Pool, HeartbeatInterval: Beat, GarbageInterval: 200 * time.Millisecond, ReserveBytes: -1, TPC: c.TPC})
	if err != nil {
		t.Fatal(err)
	}
	d.srv, d.done = srv, make(chan error, 1)
	go func() { d.done <- srv.Serve(ln) }()
	// Wait until it answers: a Close before Serve took the listener would
	// leave Serve running.
	for range 200 {
		if resp, err := http.Get("http://" + d.Addr + "/"); err == nil {
			resp.Body.Close()
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("data server %s does not answer", id)
}

// Kill stops data servers.
func (c *Cluster) Kill(ids ...string) {
	for _, id := range ids {
		if d := c.Disks[id]; d.srv != nil {
			d.srv.Close()
			<-d.done
			d.srv = nil
		}
	}
}

// WaitLive waits until the catalog has a fresh heartbeat of every id and
// of the gw, and md's placement has seen them.
func (c *Cluster) WaitLive(ids ...string) {
	c.T.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		servers, err := c.DB.Servers(context.Background())
		if err != nil {
			c.T.Fatal(err)
		}
		live := map[string]bool{}
		for _, s := range servers {
			live[s.ID] = s.Live(time.Now(), c.TTL/2) // md writes a heartbeat every TTL/6 at least
		}
		all := live["gw0"]
		for _, id := range ids {
			all = all && live[id]
		}
		if all {
			time.Sleep(PlacementRefresh)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.T.Fatalf("servers %v never live", ids)
}

// WaitDead waits until md no longer counts killed servers as live.
func (c *Cluster) WaitDead() {
	time.Sleep(TTL + PlacementRefresh + 100*time.Millisecond)
}

// Admin calls a signed admin endpoint of the redirect md.
func (c *Cluster) Admin(path string, req, reply any) {
	c.T.Helper()
	st, err := c.WC.Call(path, req, reply)
	if err != nil || st >= 300 {
		c.T.Fatalf("admin %s: %d %v", path, st, err)
	}
}

// Pool creates pool with layout and maps dir (created) to it.
func (c *Cluster) Pool(name, layout, dir string) {
	c.T.Helper()
	c.Admin(wire.PathAdminPoolAdd, wire.PoolAddRequest{Name: name, Layout: layout}, nil)
	if st, _ := c.Do("MKCOL", c.RURL, dir, nil, nil); st != 201 {
		c.T.Fatalf("MKCOL %s: %d", dir, st)
	}
	c.Admin(wire.PathAdminPoolSet, wire.PoolSetRequest{Dir: dir, Pool: name}, nil)
}
