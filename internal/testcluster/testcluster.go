// Package testcluster starts real diskservers on loopback ports for the
// tests of what runs over them (ec, gw): each can be stopped and started
// again on the same port and data dir. Test support only.
package testcluster

import (
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"shoal"
	"shoal/diskserver"
	"shoal/diskserver/remote"
	"shoal/sign"
)

// Disk is a real diskserver on a loopback port.
type Disk struct {
	T    testing.TB
	ID   string
	Dir  string
	Addr string
	Keys *sign.Keys
	srv  *diskserver.Server
	done chan error
}

// URL is the server's base URL.
func (d *Disk) URL() string { return "http://" + d.Addr }

// Uploads is how many objects the server is writing (its temp files,
// unnamed where the filesystem has O_TMPFILE, do not show in its tmp/).
func (d *Disk) Uploads() int64 { return d.srv.Store().Uploads() }

// Start serves Dir on Addr (a free port the first time, then the same).
func (d *Disk) Start() {
	d.T.Helper()
	var ln net.Listener
	var err error
	for range 50 { // the port may linger briefly after a stop
		if ln, err = net.Listen("tcp", d.Addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		d.T.Fatal(err)
	}
	d.Addr = ln.Addr().String()
	srv, err := diskserver.New(diskserver.Options{ID: d.ID, Dirs: []string{d.Dir}, Keys: d.Keys, PublicURL: "http://" + d.Addr, ReserveBytes: -1})
	if err != nil {
		d.T.Fatal(err)
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
	d.T.Fatalf("diskserver %s does not answer", d.ID)
}

// Stop closes the server and waits until it has stopped.
func (d *Disk) Stop() {
	if d.srv != nil {
		d.srv.Close()
		<-d.done
		d.srv = nil
	}
}

// Cluster is n real diskservers (ids ds0, ds1, …) sharing keys.
type Cluster struct {
	Keys  *sign.Keys
	Disks []*Disk
}

// Start starts n diskservers, each over its own temp dir, stopped when
// the test ends.
func Start(t testing.TB, n int) *Cluster {
	t.Helper()
	c := &Cluster{Keys: sign.Random()}
	for i := range n {
		d := &Disk{T: t, ID: fmt.Sprintf("ds%d", i), Dir: t.TempDir(), Addr: "127.0.0.1:0", Keys: c.Keys}
		d.Start()
		c.Disks = append(c.Disks, d)
	}
	t.Cleanup(func() {
		for _, d := range c.Disks {
			d.Stop()
		}
	})
	return c
}

// IDs lists the servers' ids in order.
func (c *Cluster) IDs() []string {
	var ids []string
	for _, d := range c.Disks {
		ids = append(ids, d.ID)
	}
	return ids
}

// URLs maps the servers' ids to their base URLs.
func (c *Cluster) URLs() map[string]string {
	m := map[string]string{}
	for _, d := range c.Disks {
		m[d.ID] = d.URL()
	}
	return m
}

// Remotes returns HTTP clients for the servers, in order.
func (c *Cluster) Remotes() []shoal.BlobStore {
	var out []shoal.BlobStore
	for _, d := range c.Disks {
		r := remote.New(d.URL(), c.Keys)
		r.Timeout = 5 * time.Second
		out = append(out, r)
	}
	return out
}

// ObjectFile finds the file holding object id under a data dir (not a
// temp file of an upload).
func ObjectFile(t testing.TB, dir, id string) string {
	t.Helper()
	var found string
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() && e.Name() == id && !strings.Contains(p[len(dir):], "tmp") {
			found = p
		}
		return nil
	})
	if found == "" {
		t.Fatalf("no file for %s under %s", id, dir)
	}
	return found
}

// FlipBytes corrupts n bytes of a file at off.
func FlipBytes(t testing.TB, path string, off int64, n int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, n)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	for i := range b {
		b[i] ^= 0xa5
	}
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

// WalkFiles calls fn with the path of every regular file under dir.
func WalkFiles(dir string, fn func(string)) {
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() {
			fn(p)
		}
		return nil
	})
}
