package md

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"shoal"
	"shoal/cache"
	"shoal/catalog"
	"shoal/diskserver"
	"shoal/internal/testsvc"
	"shoal/sign"
)

func TestMain(m *testing.M) { testsvc.Main(m) }

// quotaCluster is two md replicas over one catalog — each with its own
// connections and in-process cache, as two processes would have — the
// first redirecting PUTs, the second proxying them, and one data server.
type quotaCluster struct {
	t    *testing.T
	dbs  []*catalog.DB
	mds  []*Server
	urls []string // [0] redirect, [1] proxy
	ds   *diskserver.Server
	http *http.Client
}

func newQuotaCluster(t *testing.T, dsn string, tweak ...func(*Options)) *quotaCluster {
	t.Helper()
	ctx := context.Background()
	keys := sign.Random()
	c := &quotaCluster{t: t, http: &http.Client{Timeout: 60 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	for _, mode := range []string{DataRedirect, DataProxy} {
		db, err := catalog.Open(ctx, catalog.Options{DSN: dsn})
		if err != nil {
			t.Fatal(err)
		}
		opts := Options{Catalog: cache.NewCatalog(db, cache.Options{L1: true}), Keys: keys, DataMode: mode}
		for _, f := range tweak {
			f(&opts)
		}
		m, err := New(opts)
		if err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go m.Serve(ln)
		c.dbs, c.mds, c.urls = append(c.dbs, db), append(c.mds, m), append(c.urls, "http://"+ln.Addr().String())
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ds, err := diskserver.New(diskserver.Options{ID: "ds1", PublicURL: "http://" + ln.Addr().String(), Dirs: []string{filepath.Join(t.TempDir(), "disk")},
		MDURL: c.urls[0], Keys: keys, ReserveBytes: -1, HeartbeatInterval: 300 * time.Millisecond, GarbageInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	c.ds = ds
	go ds.Serve(ln)
	t.Cleanup(func() {
		ds.Close()
		for i := range c.mds {
			c.mds[i].Close()
			c.dbs[i].Close()
		}
	})
	for deadline := time.Now().Add(10 * time.Second); ; {
		if servers, _ := c.dbs[0].Servers(ctx); len(servers) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("data server did not register")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return c
}

// request sends one request (safe from any goroutine): base is an md URL
// or "" for an absolute path.
func (c *quotaCluster) request(method, url string, hdr map[string]string, body []byte) (int, http.Header, string, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		return 0, nil, "", err
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return 0, nil, "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(b), err
}

// put writes data at path through md i: redirected (Expect: 100-continue,
// then the body to the 307's Location) or proxied.
func (c *quotaCluster) put(i int, path string, data []byte) (int, string, error) {
	hdr := map[string]string{}
	if i == 0 {
		hdr["Expect"] = "100-continue"
	}
	st, h, body, err := c.request("PUT", c.urls[i]+path, hdr, data)
	if err == nil && st == http.StatusTemporaryRedirect {
		st, _, body, err = c.request("PUT", h.Get("Location"), nil, data)
	}
	return st, body, err
}

func (c *quotaCluster) must(method string, i int, path string, hdr map[string]string, body []byte, want int) string {
	c.t.Helper()
	st, _, b, err := c.request(method, c.urls[i]+path, hdr, body)
	if err != nil || st != want {
		c.t.Fatalf("%s %s via md %d: %d %q %v, want %d", method, path, i, st, b, err, want)
	}
	return b
}

// quota reads dir's quota from the catalog.
func (c *quotaCluster) quota(dir string) shoal.Quota {
	c.t.Helper()
	qs, err := c.dbs[0].QuotasFor(context.Background(), dir)
	if err != nil || len(qs) == 0 || qs[0].Dir != dir {
		c.t.Fatalf("QuotasFor(%s) = %+v, %v", dir, qs, err)
	}
	return qs[0]
}

const quotaPropfind = `<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:quota-used-bytes/><D:quota-available-bytes/></D:prop></D:propfind>`

// quotaProps reads quota-used-bytes and quota-available-bytes of path
// through md i.
func (c *quotaCluster) quotaProps(i int, path string) (used, avail int64) {
	c.t.Helper()
	b := c.must("PROPFIND", i, path, map[string]string{"Depth": "0"}, []byte(quotaPropfind), 207)
	return xmlInt(c.t, b, "quota-used-bytes"), xmlInt(c.t, b, "quota-available-bytes")
}

// xmlInt reads the integer in the first <D:name> element of a
// multistatus.
func xmlInt(t *testing.T, body, name string) int64 {
	t.Helper()
	_, rest, ok := strings.Cut(body, "<D:"+name+">")
	v, _, ok2 := strings.Cut(rest, "</D:"+name+">")
	var n int64
	if _, err := fmt.Sscan(v, &n); !ok || !ok2 || err != nil {
		t.Fatalf("no %s in %s", name, body)
	}
	return n
}

// TestQuotaConcurrentUploads and TestMariaDBQuotaConcurrentUploads: 40
// uploads at once, half redirected through one md and half proxied
// through another, into a quota that holds ten of them: the catalog's
// counters, sampled all along, never go past the limit; each upload gets
// 201 or a 507 naming DAV:quota-not-exceeded; the sum of the visible
// files stays within the limit and equals quota-used-bytes (both md),
// with nothing left reserved.
func TestQuotaConcurrentUploads(t *testing.T) {
	runQuotaRace(t, "sqlite:"+filepath.Join(t.TempDir(), "catalog.db"))
}

func TestMariaDBQuotaConcurrentUploads(t *testing.T) {
	runQuotaRace(t, testsvc.MariaDB(t))
}

func runQuotaRace(t *testing.T, dsn string) {
	c := newQuotaCluster(t, dsn)
	const n, size = 40, 64 << 10
	const limit = 10*size + 1000
	c.must("MKCOL", 0, "/q", nil, nil, 201)
	if _, err := c.dbs[1].SetQuota(context.Background(), "/q", limit, 0); err != nil {
		t.Fatal(err)
	}

	stop := make(chan struct{})
	var samples, over atomic.Int64
	var sampler sync.WaitGroup
	sampler.Add(1)
	go func() {
		defer sampler.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			if qs, err := c.dbs[0].QuotasFor(context.Background(), "/q"); err == nil && len(qs) == 1 {
				samples.Add(1)
				if qs[0].UsedBytes+qs[0].Reserved > limit {
					over.Add(1)
				}
			}
		}
	}()

	statuses := make([]int, n)
	bodies := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			data := bytes.Repeat([]byte{byte(i)}, size)
			statuses[i], bodies[i], errs[i] = c.put(i%2, fmt.Sprintf("/q/f%02d", i), data)
		}()
	}
	wg.Wait()
	close(stop)
	sampler.Wait()

	created := 0
	for i := range n {
		switch {
		case errs[i] != nil:
			t.Errorf("upload %d: %v", i, errs[i])
		case statuses[i] == 201:
			created++
		case statuses[i] == 507:
			if !strings.Contains(bodies[i], "<D:quota-not-exceeded/>") {
				t.Errorf("upload %d: 507 without DAV:quota-not-exceeded: %s", i, bodies[i])
			}
		default:
			t.Errorf("upload %d via md %d: %d %q, want 201 or 507", i, i%2, statuses[i], bodies[i])
		}
	}
	if created == 0 || created > limit/size {
		t.Errorf("%d uploads of %d bytes created in a quota of %d", created, size, limit)
	}
	if over.Load() > 0 {
		t.Errorf("%d of %d samples saw used + reserved over the limit", over.Load(), samples.Load())
	}
	es, err := c.dbs[0].List(context.Background(), "/q")
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, e := range es {
		sum += e.Size
	}
	if len(es) != created || sum > limit {
		t.Errorf("%d files visible (%d bytes) after %d created, limit %d", len(es), sum, created, limit)
	}
	q := c.quota("/q")
	if q.UsedBytes != sum || q.UsedFiles != int64(len(es)) || q.Reserved != 0 {
		t.Errorf("quota after the run = %+v; the directory holds %d bytes in %d files", q, sum, len(es))
	}
	for i := range c.urls {
		if used, avail := c.quotaProps(i, "/q"); used != sum || avail != limit-sum {
			t.Errorf("md %d: quota-used-bytes %d, quota-available-bytes %d; want %d, %d", i, used, avail, sum, limit-sum)
		}
	}
	t.Logf("%d of %d uploads created, %d samples of the counters", created, n, samples.Load())
}
