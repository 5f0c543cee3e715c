package md

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"shoal"
	"shoal/storetest"
	"shoal/wire"
)

// TestReplica2Cluster: replica:2 files get two copies on two servers
// before the PUT is answered; with one down, reads go on (proxy at once,
// redirect once md sees it dead); PROPPATCH of shoal:pool maps a
// directory.
func TestReplica2Cluster(t *testing.T) {
	c := newCluster(t)
	c.addDisks("r2", 3)
	c.admin(wire.PathAdminPoolAdd, wire.PoolAddRequest{Name: "r2", Layout: "replica:2"}, nil)
	if st, _ := c.do("MKCOL", c.rURL, "/r", nil, nil); st != 201 {
		t.Fatal("MKCOL")
	}
	patch := `<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><s:pool xmlns:s="http://shoal.dev/ns">r2</s:pool></D:prop></D:set></D:propertyupdate>`
	if st, body := c.do("PROPPATCH", c.rURL, "/r", nil, []byte(patch)); st != 207 {
		t.Fatalf("PROPPATCH shoal:pool: %d %s", st, body)
	}
	var pools []shoal.Pool
	c.admin(wire.PathAdminPools, struct{}{}, &pools)
	if len(pools) != 2 || pools[1].Name != "r2" {
		t.Fatalf("pools: %+v", pools)
	}
	data := storetest.Data(5, 300_000)
	for _, base := range []string{c.rURL, c.pURL} {
		if st, body := c.do("PUT", base, "/r/f", nil, data); st != 201 && st != 204 {
			t.Fatalf("PUT via %s: %d %s", base, st, body)
		}
	}
	e, err := c.db.Stat(context.Background(), "/r/f")
	if err != nil {
		t.Fatal(err)
	}
	if e.Layout.String() != "replica:2" || len(e.Replicas) != 2 || e.Replicas[0].Server == e.Replicas[1].Server {
		t.Fatalf("entry: %v %+v", e.Layout, e.Replicas)
	}
	for _, r := range e.Replicas { // both copies are durable and whole on disk
		if got := c.objectFile(r.Server, r.Object); got == "" {
			t.Fatal("copy missing")
		}
	}
	c.kill(e.Replicas[0].Server)
	st, got := c.do("GET", c.pURL, "/r/f", nil, nil)
	if st != 200 || string(got) != string(data) {
		t.Fatalf("proxied GET with one copy down: %d", st)
	}
	c.waitDead()
	c.mustGet("/r/f", data)
}

// TestDrainUnderLoad: a replica:2 pool of four servers; while clients
// write and read through both frontends, one server is drained: no
// request fails, it ends retired and, once its garbage is collected, holds
// nothing. Then a gw dies in the middle of a PUT: nothing becomes visible
// and fsck finds no shard it cannot account for.
func TestDrainUnderLoad(t *testing.T) {
	c := newCluster(t)
	ids := c.addDisks("r2", 4)
	c.pool("r2", "replica:2", "/d")
	want := map[string][]byte{}
	for i := range 12 {
		p := fmt.Sprintf("/d/f%02d", i)
		want[p] = storetest.Data(uint64(i), 20_000+i*1000)
		if st, body := c.do("PUT", c.pURL, p, nil, want[p]); st != 201 {
			t.Fatalf("PUT %s: %d %s", p, st, body)
		}
	}
	victim := ids[0]
	if len(c.objects(victim)) == 0 {
		t.Fatalf("%s holds nothing before the drain", victim)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	fails := func(s string) { mu.Lock(); failures = append(failures, s); mu.Unlock() }
	for w := range 2 {
		wg.Go(func() { // writer: new files, bounded
			for i := 0; i < 40; i++ {
				select {
				case <-stop:
					return
				default:
				}
				p := fmt.Sprintf("/d/w%d-%02d", w, i)
				if st, body := c.do("PUT", c.pURL, p, nil, storetest.Data(uint64(100+i), 10_000)); st != 201 {
					fails(fmt.Sprintf("PUT %s: %d %s", p, st, body))
				}
			}
		})
		wg.Go(func() { // reader: the old files, both frontends, bounded
			for i := 0; i < 200; i++ {
				select {
				case <-stop:
					return
				default:
				}
				p := fmt.Sprintf("/d/f%02d", i%12)
				base := []string{c.rURL, c.pURL}[(i+w)%2]
				if st, got := c.do("GET", base, p, nil, nil); st != 200 || string(got) != string(want[p]) {
					fails(fmt.Sprintf("GET %s via %s: %d", p, base, st))
				}
			}
		})
	}
	time.Sleep(200 * time.Millisecond)
	var dr wire.DrainReport
	c.admin(wire.PathAdminDrain, wire.DrainRequest{Server: victim}, &dr)
	close(stop)
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("%d requests failed during the drain, first: %s", len(failures), failures[0])
	}
	if dr.State != "retired" || dr.Left != 0 || len(dr.Problems) != 0 || dr.Moved == 0 {
		t.Fatalf("drain: %+v", dr)
	}
	for p, data := range want {
		c.mustGet(p, data)
	}
	deadline := time.Now().Add(15 * time.Second)
	for len(c.objects(victim)) > 0 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	if left := c.objects(victim); len(left) > 0 {
		t.Fatalf("%s still holds %d objects after its garbage was due", victim, len(left))
	}

	// A gw killed mid-PUT: the client has sent half the body.
	pr, pw := io.Pipe()
	req, _ := http.NewRequest("PUT", c.pURL+"/d/half", pr)
	req.ContentLength = 1 << 20
	done := make(chan int, 1)
	go func() {
		resp, err := httpClient.Do(req)
		if err != nil {
			done <- 0
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	pw.Write(storetest.Data(9, 300_000))
	time.Sleep(200 * time.Millisecond)
	go c.gw.Close()
	time.Sleep(200 * time.Millisecond)
	pw.CloseWithError(io.ErrUnexpectedEOF) // the client gives up too
	if st := <-done; st >= 200 && st < 300 {
		t.Fatalf("PUT through a killed gw answered %d", st)
	}
	if _, err := c.db.Stat(context.Background(), "/d/half"); !shoal.IsKind(err, shoal.KindNotFound) {
		t.Fatalf("half-written file visible: %v", err)
	}
	rep, err := Fsck(context.Background(), c.redirect.cat, c.redirect.opts.Store, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Orphans) != 0 || len(rep.Missing) != 0 {
		t.Fatalf("fsck after the killed gw: %+v", rep)
	}
	for _, u := range rep.Unreachable {
		if !strings.HasPrefix(u.Server, "gw") {
			t.Fatalf("fsck: unreachable %+v", u)
		}
	}
}
