package e2e

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"shoal/internal/testsvc"
)

// TestCatalogOutageAgesOutServers: MariaDB stopped for 10 s under a GET
// load of files whose entries are in memcached, through two md (one
// proxying, one redirecting) with md.server_ttl 3 s and a data server
// heartbeating every second. Every GET keeps working during the outage
// (the entry comes from memcached, the server list from md's memory, and
// the time md's catalog was failing does not age the data server out);
// once MariaDB is back no request fails for lack of a live server, and a
// new file can be written at once. Before, md declared the data server
// dead 3 s into the outage (its heartbeats failed and were not retried)
// and requests failed until a while after MariaDB was back.
func TestCatalogOutageAgesOutServers(t *testing.T) {
	maria := testsvc.StartMariaDB(t)
	mc := testsvc.StartMemcached(t)
	secret := writeSecret(t, "k1 0123456789abcdef0123456789abcdef\n")
	ttl := []string{"SHOAL_MD_SERVER_TTL=3s"}
	a := startMD(t, maria.DSN, mc.Addr, secret, append(ttl, "SHOAL_MD_DATA_MODE=proxy"))
	b := startMD(t, maria.DSN, mc.Addr, secret, append(ttl, "SHOAL_MD_DATA_MODE=redirect"))
	startDisk(t, a.URL, secret, "SHOAL_DISK_HEARTBEAT=1s")

	const files = 10
	body := func(i int) string { return strings.Repeat(fmt.Sprintf("file %d ", i), 2000) } // 14+ KiB: on the data server
	mustDo(t, 201, "MKCOL", a.URL+"/c/", "")
	for i := range files {
		mustDo(t, 201, "PUT", fmt.Sprintf("%s/c/f%d", a.URL, i), body(i))
	}
	// get GETs file i through md, following md's redirect, and says what
	// went wrong ("" if nothing).
	get := func(md string, i int) string {
		got := do("GET", fmt.Sprintf("%s/c/f%d", md, i), "")
		if got.status == 302 {
			got = do("GET", got.header.Get("Location"), "")
		}
		if got.status != 200 || got.body != body(i) {
			return fmt.Sprintf("GET /c/f%d via %s: %d %.200q", i, md, got.status, got.body)
		}
		return ""
	}
	for range 2 { // the second round is answered from memcached
		for i := range files {
			for _, md := range []string{a.URL, b.URL} {
				if err := get(md, i); err != "" {
					t.Fatal(err)
				}
			}
		}
	}

	type phase struct {
		sent, failed atomic.Int64
		first        atomic.Value
	}
	var during, after phase
	var cur atomic.Pointer[phase]
	cur.Store(&phase{}) // before the outage
	stop := make(chan struct{})
	var wg sync.WaitGroup
	deadline := time.Now().Add(90 * time.Second) // bound even if MariaDB is slow to come back
	for w := range 4 {
		md := []string{a.URL, b.URL}[w%2]
		wg.Go(func() {
			for i := 0; i < 50000 && time.Now().Before(deadline); i++ {
				select {
				case <-stop:
					return
				default:
				}
				p := cur.Load()
				err := get(md, (i*3+w)%files)
				p.sent.Add(1)
				if err != "" {
					p.failed.Add(1)
					p.first.CompareAndSwap(nil, err)
				}
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
	time.Sleep(time.Second)
	cur.Store(&during)
	maria.Stop()
	time.Sleep(10 * time.Second)
	maria.Start()
	cur.Store(&after)
	// At once: a new file needs a live data server with room.
	put := do("PUT", a.URL+"/c/new", body(99))
	time.Sleep(4 * time.Second)
	close(stop)
	wg.Wait()

	t.Logf("during the outage: %d GETs, %d failed; after: %d, %d failed", during.sent.Load(), during.failed.Load(), after.sent.Load(), after.failed.Load())
	if during.failed.Load() != 0 {
		t.Errorf("%d of %d cached GETs failed while MariaDB was stopped; first: %v", during.failed.Load(), during.sent.Load(), during.first.Load())
	}
	if after.failed.Load() != 0 {
		t.Errorf("%d of %d GETs failed after MariaDB was back; first: %v", after.failed.Load(), after.sent.Load(), after.first.Load())
	}
	if during.sent.Load() < 100 || after.sent.Load() < 40 {
		t.Errorf("too few GETs to tell: %d during, %d after", during.sent.Load(), after.sent.Load())
	}
	if put.status != 201 {
		t.Errorf("PUT of a new file right after MariaDB was back = %v, want 201", put)
	}
}
