package md_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"shoal/internal/testcluster"
	"shoal/internal/testsystem"
	"shoal/internal/tpcpeer"
	"shoal/md"
	"shoal/storetest"
	"shoal/tpc"
)

// TestTPCCluster: third-party copies into and out of replica:2 and
// ec:4+2 pools go through the gw (md's 307 names it), in redirect and
// proxy mode: a pull is written as a PUT would be — the copies or shards,
// committed once the source's digest matched — and a push reads the file
// as a GET would.
func TestTPCCluster(t *testing.T) {
	// No failover here: a long server TTL and no probes, so that a
	// heartbeat late under -race on a loaded box does not make a server
	// look dead.
	c := testsystem.New(t, func(o *md.Options) { o.ServerTTL, o.ProbeInterval = 10*time.Second, -1 })
	c.AddDisks("r2", 3) // a spare each: a server slow to heartbeat (under emulation) leaves enough
	c.AddDisks("ec", 7)
	c.Pool("r2", "replica:2", "/r2")
	c.Pool("ec", "ec:4+2", "/ec")
	data := storetest.Data(5, 1<<20+4321)
	src := tpcpeer.NewSource(t, data)
	d := tpcpeer.NewDest(t)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	copyVia := func(base, path, name, remote string) (int, string, tpc.Outcome) {
		t.Helper()
		u, first, loc := base+path, 0, ""
		for hop := 0; ; hop++ {
			req, _ := http.NewRequest("COPY", u, nil)
			req.Header.Set(name, remote)
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if hop == 0 {
				first = resp.StatusCode
			}
			if resp.StatusCode == http.StatusTemporaryRedirect && hop == 0 {
				loc = resp.Header.Get("Location")
				resp.Body.Close()
				u = loc
				continue
			}
			defer resp.Body.Close()
			out, err := tpc.ReadStream(resp.Body, nil)
			if err != nil || resp.StatusCode != 202 {
				t.Fatalf("COPY %s: %d %v", u, resp.StatusCode, err)
			}
			return first, loc, out
		}
	}
	for _, dir := range []string{"/r2", "/ec"} {
		for _, base := range []string{c.RURL, c.PURL} {
			p := dir + "/pulled-" + map[string]string{c.RURL: "r", c.PURL: "p"}[base]
			first, loc, out := copyVia(base, p, "Source", src.URL("/f/"+p))
			if !out.Success {
				t.Fatalf("pull into %s via %s: %+v", p, base, out)
			}
			if base == c.RURL && (first != 307 || !strings.HasPrefix(loc, c.GWURL+"/obj/")) {
				t.Errorf("pull into %s: %d to %s, want 307 to the gw", p, first, loc)
			}
			c.MustGet(p, data)
			e := c.Entry(p)
			if want := map[string]int{"/r2": 2, "/ec": 6}[dir]; len(e.Replicas) != want {
				t.Errorf("%s: %d replicas, want %d", p, len(e.Replicas), want)
			}
			remote := d.URL("/pushed" + p)
			first, loc, out = copyVia(base, p, "Destination", remote)
			if !out.Success {
				t.Fatalf("push of %s via %s: %+v", p, base, out)
			}
			if base == c.RURL && dir == "/ec" && (first != 307 || !strings.HasPrefix(loc, c.GWURL+"/obj/")) {
				t.Errorf("push of %s: %d to %s, want 307 to the gw", p, first, loc)
			}
			if got, _ := d.File("/pushed" + p); !bytes.Equal(got, data) {
				t.Errorf("push of %s: %d bytes arrived", p, len(got))
			}
		}
	}
	// A lying source leaves no shard and no file.
	files := func() int {
		n := 0
		for _, disk := range c.Disks {
			testcluster.WalkFiles(disk.Dir, func(string) { n++ })
		}
		return n
	}
	before := files()
	if _, _, out := copyVia(c.RURL, "/ec/lie", "Source", src.URL("/lie/x")); out.Success {
		t.Fatalf("a lying source into ec: %+v", out)
	}
	if after := files(); after != before {
		t.Errorf("a failed pull into ec left %d files on the data servers", after-before)
	}
	if st, _ := c.Do("HEAD", c.RURL, "/ec/lie", nil, nil); st != 404 {
		t.Errorf("HEAD of a failed pull: %d", st)
	}
}
