package md_test

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"hash/adler32"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"shoal/gw"
	"shoal/internal/testsystem"
	"shoal/md"
	"shoal/storetest"
)

// noFollow returns md's redirects as answers.
var noFollow = &http.Client{
	Timeout:       10 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	Transport:     &http.Transport{MaxIdleConnsPerHost: 16},
}

// addGateway starts one more gw (id) for the cluster's md; it is closed
// by close, or when the test ends.
func addGateway(c *testsystem.Cluster, id string) (u string, close func()) {
	c.T.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		c.T.Fatal(err)
	}
	u = "http://" + ln.Addr().String()
	g, err := gw.NewServer(gw.ServerOptions{ID: id, PublicURL: u, MDURL: c.RURL, Keys: c.Keys,
		StripeSize: 64 << 10, HeartbeatInterval: testsystem.Beat, RefreshInterval: 300 * time.Millisecond})
	if err != nil {
		c.T.Fatal(err)
	}
	go g.Serve(ln)
	var once sync.Once
	close = func() { once.Do(func() { g.Close() }) }
	c.T.Cleanup(close)
	return u, close
}

// putFiles writes n files of size bytes under dir through the redirect md.
func putFiles(c *testsystem.Cluster, dir string, n, size int) map[string][]byte {
	c.T.Helper()
	files := map[string][]byte{}
	for i := range n {
		p := fmt.Sprintf("%s/f%d", dir, i)
		files[p] = storetest.Data(uint64(100+i), size)
		if st, body := c.Do("PUT", c.RURL, p, nil, files[p]); st != 201 {
			c.T.Fatalf("PUT %s: %d %s", p, st, body)
		}
	}
	return files
}

// loadReport is what a GET load saw around the death of one server.
type loadReport struct {
	early, late int    // 302s to the dead server within 2 s of its death, and after
	redirects   int    // 302s in all
	proxied     int    // proxied GETs answered with the right bytes
	bad         int    // any other answer
	firstBad    string // the first of them
}

// getLoadAcrossDeath sends GETs of files from 2 readers through the
// redirect md (counting where the 302s point) and 2 through the proxy md
// (checking every byte), calls kill after a warm-up, and goes on for 4 s.
func getLoadAcrossDeath(c *testsystem.Cluster, files map[string][]byte, victim string, kill func()) loadReport {
	var paths []string
	for p := range files {
		paths = append(paths, p)
	}
	var mu sync.Mutex
	var rep loadReport
	var killedAt atomic.Int64 // unix nanos; 0 before the kill
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := 0; i < 20000; i++ {
				select {
				case <-stop:
					return
				default:
				}
				p := paths[(i*7+w)%len(paths)]
				if w < 2 {
					resp, err := noFollow.Get(c.RURL + p)
					at := time.Now().UnixNano()
					mu.Lock()
					if err != nil || resp.StatusCode != 302 {
						rep.bad++
						if rep.firstBad == "" {
							rep.firstBad = fmt.Sprintf("redirect GET %s: %v %v", p, err, resp)
						}
					} else {
						rep.redirects++
						loc, _ := url.Parse(resp.Header.Get("Location"))
						if k := killedAt.Load(); k != 0 && loc != nil && loc.Host == victim {
							if at-k > int64(2*time.Second) {
								rep.late++
							} else {
								rep.early++
							}
						}
					}
					mu.Unlock()
					if resp != nil {
						resp.Body.Close()
					}
					continue
				}
				st, body := c.Do("GET", c.PURL, p, nil, nil)
				mu.Lock()
				if st == 200 && bytes.Equal(body, files[p]) {
					rep.proxied++
				} else {
					rep.bad++
					if rep.firstBad == "" {
						rep.firstBad = fmt.Sprintf("proxied GET %s: %d, %d bytes: %.200s", p, st, len(body), body)
					}
				}
				mu.Unlock()
			}
		})
	}
	time.Sleep(300 * time.Millisecond)
	killedAt.Store(time.Now().UnixNano())
	kill()
	time.Sleep(4 * time.Second)
	close(stop)
	wg.Wait()
	return rep
}

// TestDeadServerStillGetsTraffic: a data server of a replica:2 pool, then
// a gw, dies under a GET load. md's probes find it gone and mark it
// suspect, so that within about 2 s no more redirects point at it,
// although its last heartbeat is far younger than md's ServerTTL (30 s
// here, so that the TTL cannot be what stops them); proxied GETs fall over
// to the live replica (or gw) and never fail. Before, md kept redirecting
// to a dead server until its heartbeat aged out.
func TestDeadServerStillGetsTraffic(t *testing.T) {
	c := testsystem.New(t, func(o *md.Options) { o.ServerTTL = 30 * time.Second })
	t.Run("data server", func(t *testing.T) {
		ids := c.AddDisks("r", 2)
		c.Pool("r", "replica:2", "/r")
		files := putFiles(c, "/r", 8, 64<<10)
		victim := c.Disks[ids[0]].Addr
		rep := getLoadAcrossDeath(c, files, victim, func() { c.Kill(ids[0]) })
		t.Logf("%+v", rep)
		if rep.late != 0 {
			t.Errorf("%d redirects to the dead data server more than 2 s after it died (%d within 2 s)", rep.late, rep.early)
		}
		if rep.bad != 0 {
			t.Errorf("%d GETs failed although a replica was live; first: %s", rep.bad, rep.firstBad)
		}
		if rep.redirects < 20 || rep.proxied < 20 {
			t.Errorf("the load made too few requests to tell: %+v", rep)
		}
	})
	t.Run("gw", func(t *testing.T) {
		c.AddDisks("ec", 3)
		c.Pool("ec", "ec:2+1", "/ec")
		gw1, closeGW1 := addGateway(c, "gw1")
		c.WaitLive("gw1")
		files := putFiles(c, "/ec", 4, 200<<10)
		victim := strings.TrimPrefix(gw1, "http://")
		rep := getLoadAcrossDeath(c, files, victim, closeGW1)
		t.Logf("%+v", rep)
		if rep.late != 0 {
			t.Errorf("%d redirects to the dead gw more than 2 s after it died (%d within 2 s)", rep.late, rep.early)
		}
		if rep.bad != 0 {
			t.Errorf("%d GETs failed although a gw was live; first: %s", rep.bad, rep.firstBad)
		}
		if rep.redirects < 20 || rep.proxied < 20 {
			t.Errorf("the load made too few requests to tell: %+v", rep)
		}
	})
}

// metalink is a Metalink 4 document as RFC 5854 defines it (the parts md
// writes).
type metalink struct {
	XMLName xml.Name `xml:"urn:ietf:params:xml:ns:metalink metalink"`
	Files   []struct {
		Name string `xml:"name,attr"`
		Size int64  `xml:"size"`
		URLs []struct {
			Priority int    `xml:"priority,attr"`
			URL      string `xml:",chardata"`
		} `xml:"url"`
		Hashes []struct {
			Type  string `xml:"type,attr"`
			Value string `xml:",chardata"`
		} `xml:"hash"`
	} `xml:"file"`
}

// getMetalink asks md at base for p's Metalink and parses it.
func getMetalink(c *testsystem.Cluster, base, p string) (metalink, http.Header) {
	c.T.Helper()
	req, _ := http.NewRequest("GET", base+p, nil)
	req.Header.Set("Accept", "application/metalink4+xml, */*;q=0.1")
	resp, err := noFollow.Do(req)
	if err != nil {
		c.T.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/metalink4+xml" {
		c.T.Fatalf("GET %s with Accept: metalink via %s: %d %s %s", p, base, resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	var ml metalink
	if err := xml.Unmarshal(body, &ml); err != nil {
		c.T.Fatalf("Metalink of %s: %v\n%s", p, err, body)
	}
	if len(ml.Files) != 1 {
		c.T.Fatalf("Metalink of %s has %d files:\n%s", p, len(ml.Files), body)
	}
	return ml, resp.Header
}

// TestMetalink: GET (and HEAD) with Accept: application/metalink4+xml
// answers a Metalink 4 document with the file's name, size, adler32 and
// md5, and one signed URL per live replica — per live gw for an
// erasure-coded file — each serving the file, by priority; a replica md
// found unreachable comes last. The redirect names the other replicas in
// Link: rel=duplicate and the Metalink in Link: rel=describedby.
func TestMetalink(t *testing.T) {
	c := testsystem.New(t, func(o *md.Options) { o.ServerTTL = 30 * time.Second })
	ids := c.AddDisks("r", 2)
	c.Pool("r", "replica:2", "/r")
	c.AddDisks("ec", 3)
	c.Pool("ec", "ec:2+1", "/ec")
	addGateway(c, "gw1")
	c.WaitLive("gw1")
	files := putFiles(c, "/r", 1, 100<<10)
	for p, b := range putFiles(c, "/ec", 1, 300<<10) {
		files[p] = b
	}
	for p, data := range files {
		for _, base := range []string{c.RURL, c.PURL} {
			ml, _ := getMetalink(c, base, p)
			f := ml.Files[0]
			sum := md5sum(data)
			if f.Name != path.Base(p) || f.Size != int64(len(data)) || len(f.URLs) != 2 {
				t.Errorf("Metalink of %s via %s: name %q size %d, %d URLs; want %q, %d, 2", p, base, f.Name, f.Size, len(f.URLs), path.Base(p), len(data))
			}
			hashes := map[string]string{}
			for _, h := range f.Hashes {
				hashes[h.Type] = h.Value
			}
			if want := fmt.Sprintf("%08x", adler32.Checksum(data)); hashes["adler32"] != want || hashes["md5"] != sum {
				t.Errorf("Metalink of %s: hashes %v, want adler32 %s, md5 %s", p, hashes, want, sum)
			}
			for i, u := range f.URLs {
				if u.Priority != i+1 {
					t.Errorf("Metalink of %s: URL %d has priority %d", p, i, u.Priority)
				}
				if st, got := c.Do("GET", "", u.URL, nil, nil); st != 200 || !bytes.Equal(got, data) {
					t.Errorf("Metalink URL %d of %s: %d, equal %v", i, p, st, bytes.Equal(got, data))
				}
			}
		}
		req, _ := http.NewRequest("HEAD", c.RURL+p, nil)
		req.Header.Set("Accept", "application/metalink4+xml")
		if resp, err := noFollow.Do(req); err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/metalink4+xml" {
			t.Errorf("HEAD %s with Accept: metalink: %v %v", p, resp, err)
		}
		resp, err := noFollow.Get(c.RURL + p)
		if err != nil || resp.StatusCode != 302 {
			t.Fatalf("GET %s: %v %v", p, resp, err)
		}
		resp.Body.Close()
		links := strings.Join(resp.Header.Values("Link"), "\n")
		if strings.Count(links, "rel=duplicate") != 1 || !strings.Contains(links, "<"+p+">; rel=describedby; type=\"application/metalink4+xml\"") {
			t.Errorf("302 of %s: Link headers\n%s", p, links)
		}
	}

	// A replica on a dead server comes after the live one, once md found it
	// unreachable (its heartbeat is still young: it stays listed).
	c.Kill(ids[0])
	dead := c.Disks[ids[0]].Addr
	deadline := time.Now().Add(5 * time.Second)
	for {
		ml, _ := getMetalink(c, c.RURL, "/r/f0")
		u := ml.Files[0].URLs
		if len(u) == 2 && !strings.Contains(u[0].URL, dead) && strings.Contains(u[1].URL, dead) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("5 s after a replica's server died its URL is not last: %+v", u)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func md5sum(b []byte) string {
	sum := md5.Sum(b)
	return hex.EncodeToString(sum[:])
}

// TestProxyRetriesAfter5xx: a replica whose server answers 5xx (here a
// real HTTP server that took the dead data server's address and fails
// everything) is skipped for the next one before any byte is sent, so a
// proxied GET never fails while one replica is good; and so is it at each
// window of a file relayed in several (ten windows of 10 KiB here).
func TestProxyRetriesAfter5xx(t *testing.T) {
	t.Run("one window", testProxyRetriesAfter5xx)
	t.Run("windows", func(t *testing.T) {
		t.Cleanup(md.SetProxyWindow(10 << 10))
		testProxyRetriesAfter5xx(t)
	})
}

func testProxyRetriesAfter5xx(t *testing.T) {
	c := testsystem.New(t, func(o *md.Options) { o.ServerTTL = 30 * time.Second })
	ids := c.AddDisks("r", 2)
	c.Pool("r", "replica:2", "/r")
	files := putFiles(c, "/r", 1, 100<<10)
	c.Kill(ids[0])
	ln, err := net.Listen("tcp", c.Disks[ids[0]].Addr)
	if err != nil {
		t.Fatal(err)
	}
	broken := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		ctx.Error("disk on fire", fasthttp.StatusInternalServerError)
	}}
	go broken.Serve(ln)
	t.Cleanup(func() { broken.Shutdown() })
	for i := range 20 {
		for p, data := range files {
			if st, got := c.Do("GET", c.PURL, p, nil, nil); st != 200 || !bytes.Equal(got, data) {
				t.Fatalf("proxied GET %d of %s with one replica answering 500: %d %.200s", i, p, st, got)
			}
		}
	}
}

// TestDavixMetalinkFailover: davix-get of a file one of whose two
// replicas is on a dead server that md still chooses (probes off, a long
// ServerTTL: md has not noticed) succeeds every time: when the transfer
// from the dead replica fails, davix asks md for the Metalink (a HEAD,
// then a GET, with Accept: application/metalink4+xml; --metalink failover
// is its default) and takes the next URL. (--retry 0: davix's own retries
// would ask md again, which may pick the live replica by chance.)
func TestDavixMetalinkFailover(t *testing.T) {
	davix := needTool(t, "davix-get")
	c := testsystem.New(t, func(o *md.Options) { o.ServerTTL = time.Minute; o.ProbeInterval = -1 })
	ids := c.AddDisks("r", 2)
	c.Pool("r", "replica:2", "/r")
	files := putFiles(c, "/r", 1, 300<<10)
	c.Kill(ids[0])

	// md again, behind a handler that counts the Metalink requests.
	var metalinks atomic.Int32
	h := c.Redirect.NewHTTPServer()
	inner := h.Handler
	h.Handler = func(ctx *fasthttp.RequestCtx) {
		if bytes.Contains(ctx.Request.Header.Peek("Accept"), []byte("application/metalink4+xml")) {
			metalinks.Add(1)
		}
		inner(ctx)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go h.Serve(ln)
	t.Cleanup(func() { h.Shutdown() })
	base := "http://" + ln.Addr().String()

	dir := t.TempDir()
	// md picks the first replica at random: 16 runs choose the dead one
	// first at least once but with a chance of 2^-16.
	for i := range 16 {
		for p, data := range files {
			dst := fmt.Sprintf("%s/got%d", dir, i)
			out, err := exec.Command(davix, "--retry", "0", "--metalink", "failover", base+p, dst).CombinedOutput()
			got, _ := os.ReadFile(dst)
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("davix-get %s (run %d): %v, %d bytes, equal %v\n%s", p, i, err, len(got), bytes.Equal(got, data), out)
			}
		}
	}
	if metalinks.Load() == 0 {
		t.Errorf("davix never asked for the Metalink in 16 runs")
	}
	t.Logf("%d Metalink requests in 16 runs", metalinks.Load())
}

// needTool is the path of a command the test needs: missing, the test
// fails under CI=true and is skipped elsewhere.
func needTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not installed", name)
		}
		t.Skipf("%s is not installed", name)
	}
	return p
}

// TestFrozenServerProxiedGET: a proxied GET of a file on a data server
// that accepts connections but never answers (a stopped process: the
// kernel still completes the handshake) ends with 503 after one idle
// limit, and md asks that server once; with a second replica it is read
// from there. Before, md's client sent the GET again up to five times,
// each waiting the idle limit (60 s by default): davix, whose GETs auto
// mode proxies, hung for minutes.
func TestFrozenServerProxiedGET(t *testing.T) {
	for _, replicas := range []int{1, 2} {
		t.Run(fmt.Sprintf("replica:%d", replicas), func(t *testing.T) {
			c := testsystem.New(t, func(o *md.Options) {
				o.ServerTTL, o.ProbeInterval = time.Minute, -1 // md has not noticed
				// Short, yet long enough for the PUTs before the freeze
				// under -race on a busy box (300 ms once cut one).
				o.Net.Limits.ReadIdle = time.Second
			})
			ids := c.AddDisks("r", replicas)
			c.Pool("r", fmt.Sprintf("replica:%d", replicas), "/r")
			files := putFiles(c, "/r", 1, 100<<10)
			c.Kill(ids[0])
			ln, err := net.Listen("tcp", c.Disks[ids[0]].Addr)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ln.Close() })
			var asked atomic.Int32
			go func() {
				for {
					conn, err := ln.Accept()
					if err != nil {
						return
					}
					asked.Add(1)
					go func() { io.Copy(io.Discard, conn); conn.Close() }() // reads, never answers
				}
			}()
			for p, data := range files {
				// md picks the first replica at random: at least 8 GETs, and
				// on until one went to the frozen server (8 alone miss it
				// one time in 256, as a CI run under -race did).
				for i := range 64 {
					if replicas == 2 && i >= 8 && asked.Load() > 0 {
						break
					}
					st, got := c.Do("GET", c.PURL, p, nil, nil)
					if replicas == 1 && st != http.StatusServiceUnavailable {
						t.Fatalf("proxied GET of %s, its only replica frozen: %d %.200s; want 503", p, st, got)
					}
					if replicas == 2 && (st != 200 || !bytes.Equal(got, data)) {
						t.Fatalf("proxied GET of %s, one replica frozen: %d %.200s; want 200 and the bytes", p, st, got)
					}
					if replicas == 1 {
						break
					}
				}
			}
			if n := asked.Load(); n < 1 || replicas == 1 && n != 1 {
				t.Errorf("md asked the frozen server %d times; want once", n)
			}
		})
	}
}
