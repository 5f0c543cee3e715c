package testsystem

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"shoal"
	"shoal/diskserver"
	"shoal/storetest"
)

// HTTPClient follows redirects (re-sending the body on 307).
var HTTPClient = &http.Client{Timeout: 60 * time.Second}

// Do sends a request; a transport error is status 0 with the error as body.
func (c *Cluster) Do(method, base, path string, hdr map[string]string, body []byte) (int, []byte) {
	c.T.Helper()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, base+path, r)
	if err != nil {
		c.T.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := HTTPClient.Do(req)
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// MustGet GETs path through both frontends and compares the bytes (and a
// Range) with want.
func (c *Cluster) MustGet(path string, want []byte) {
	c.T.Helper()
	for _, base := range []string{c.RURL, c.PURL} {
		st, got := c.Do("GET", base, path, nil, nil)
		if st != 200 || !bytes.Equal(got, want) {
			c.T.Fatalf("GET %s via %s: %d, %d bytes, equal %v: %.200s", path, base, st, len(got), bytes.Equal(got, want), got)
		}
		off, n := len(want)/3, len(want)/4
		st, got = c.Do("GET", base, path, map[string]string{"Range": fmt.Sprintf("bytes=%d-%d", off, off+n-1)}, nil)
		if st != 206 || !bytes.Equal(got, want[off:off+n]) {
			c.T.Fatalf("Range GET %s via %s: %d, equal %v", path, base, st, bytes.Equal(got, want[off:off+n]))
		}
	}
}

// ObjectFile finds the file of object id in a disk's data dir.
func (c *Cluster) ObjectFile(server, object string) string {
	c.T.Helper()
	var found string
	dir := c.Disks[server].Dir
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() && e.Name() == object && !strings.Contains(p[len(dir):], "tmp") {
			found = p
		}
		return nil
	})
	if found == "" {
		c.T.Fatalf("no file for %s on %s", object, server)
	}
	return found
}

// Objects lists the objects a disk holds (Walk of its store).
func (c *Cluster) Objects(server string) []string {
	c.T.Helper()
	st, err := diskserver.NewStore([]string{c.Disks[server].Dir}, -1)
	if err != nil {
		c.T.Fatal(err)
	}
	var out []string
	st.Walk(context.Background(), func(oi shoal.ObjectInfo) error {
		out = append(out, oi.ID)
		return nil
	})
	return out
}

// Flip inverts 64 bytes of a file at off.
func Flip(t *testing.T, path string, off int64) {
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

// PutECFiles writes a multi-stripe file /ec/a through the redirect md and a
// one-stripe file /ec/b through the proxy md, and returns their contents.
func (c *Cluster) PutECFiles() map[string][]byte {
	c.T.Helper()
	files := map[string][]byte{
		"/ec/a": storetest.Data(1, 1<<20+12345), // 17 stripes of 64 KiB
		"/ec/b": storetest.Data(2, 5000),
	}
	if st, body := c.Do("PUT", c.RURL, "/ec/a", nil, files["/ec/a"]); st != 201 {
		c.T.Fatalf("PUT via redirect: %d %s", st, body)
	}
	if st, body := c.Do("PUT", c.PURL, "/ec/b", nil, files["/ec/b"]); st != 201 {
		c.T.Fatalf("PUT via proxy: %d %s", st, body)
	}
	return files
}

// Entry is path's entry in the catalog.
func (c *Cluster) Entry(path string) *shoal.Entry {
	c.T.Helper()
	e, err := c.DB.Stat(context.Background(), path)
	if err != nil {
		c.T.Fatal(err)
	}
	return e
}
