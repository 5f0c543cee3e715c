package gw

import (
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"shoal"
	"shoal/diskserver"
	"shoal/diskserver/remote"
	"shoal/internal/testhttp"
	"shoal/sign"
)

// disk is a real diskserver on a loopback port that can be stopped and
// started again on the same port and data dir.
type disk struct {
	t    testing.TB
	id   string
	dir  string
	addr string
	keys *sign.Keys
	srv  *diskserver.Server
	done chan error
}

func (d *disk) URL() string { return "http://" + d.addr }

func (d *disk) start() {
	d.t.Helper()
	var ln net.Listener
	var err error
	for range 50 { // the port may linger briefly after a stop
		if ln, err = net.Listen("tcp", d.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		d.t.Fatal(err)
	}
	d.addr = ln.Addr().String()
	srv, err := diskserver.New(diskserver.Options{ID: d.id, Dirs: []string{d.dir}, Keys: d.keys, PublicURL: "http://" + d.addr, ReserveBytes: -1})
	if err != nil {
		d.t.Fatal(err)
	}
	d.srv, d.done = srv, make(chan error, 1)
	go func() { d.done <- srv.Serve(ln) }()
	// Wait until it answers: a Close before Serve took the listener would
	// leave Serve running.
	for range 100 {
		if resp, err := http.Get(d.URL() + "/"); err == nil {
			resp.Body.Close()
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	d.t.Fatalf("diskserver %s does not answer", d.id)
}

func (d *disk) stop() {
	if d.srv != nil {
		d.srv.Close()
		<-d.done
		d.srv = nil
	}
}

// cluster is n real diskservers sharing keys.
type cluster struct {
	keys  *sign.Keys
	disks []*disk
}

func startCluster(t testing.TB, n int) *cluster {
	t.Helper()
	c := &cluster{keys: sign.Random()}
	for i := range n {
		d := &disk{t: t, id: fmt.Sprintf("ds%d", i), dir: t.TempDir(), addr: "127.0.0.1:0", keys: c.keys}
		d.start()
		c.disks = append(c.disks, d)
	}
	t.Cleanup(func() {
		for _, d := range c.disks {
			d.stop()
		}
	})
	return c
}

func (c *cluster) ids() []string {
	var ids []string
	for _, d := range c.disks {
		ids = append(ids, d.id)
	}
	return ids
}

func (c *cluster) urls() map[string]string {
	m := map[string]string{}
	for _, d := range c.disks {
		m[d.id] = d.URL()
	}
	return m
}

// remotes returns HTTP clients for the cluster's servers, in order.
func (c *cluster) remotes() []shoal.BlobStore {
	var out []shoal.BlobStore
	for _, d := range c.disks {
		r := remote.New(d.URL(), c.keys)
		r.Timeout = 5 * time.Second
		out = append(out, r)
	}
	return out
}

// gateway starts a gw.Server over the cluster (static server map, no md).
func (c *cluster) gateway(t testing.TB, stripe int) (*Server, string) {
	t.Helper()
	ln, url := testhttp.Listen(t)
	srv, err := NewServer(ServerOptions{ID: "gw0", PublicURL: url, Keys: c.keys, StripeSize: stripe, Servers: c.urls()})
	if err != nil {
		t.Fatal(err)
	}
	testhttp.Serve(t, srv, ln)
	return srv, url
}
