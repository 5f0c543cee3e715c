package jobs_test

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
	"shoal/internal/testsystem"
	"shoal/jobs"
	"shoal/storetest"
	"shoal/wire"
)

// TestDrainUnderLoad: a replica:2 pool of four servers; while clients
// write and read through both frontends, one server is drained: no
// request fails, it ends retired and, once its garbage is collected, holds
// nothing. Then a gw dies in the middle of a PUT: nothing becomes visible
// and fsck finds no shard it cannot account for.
func TestDrainUnderLoad(t *testing.T) {
	c := testsystem.New(t)
	ids := c.AddDisks("r2", 4)
	c.Pool("r2", "replica:2", "/d")
	want := map[string][]byte{}
	for i := range 12 {
		p := fmt.Sprintf("/d/f%02d", i)
		want[p] = storetest.Data(uint64(i), 20_000+i*1000)
		if st, body := c.Do("PUT", c.PURL, p, nil, want[p]); st != 201 {
			t.Fatalf("PUT %s: %d %s", p, st, body)
		}
	}
	victim := ids[0]
	if len(c.Objects(victim)) == 0 {
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
				if st, body := c.Do("PUT", c.PURL, p, nil, storetest.Data(uint64(100+i), 10_000)); st != 201 {
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
				base := []string{c.RURL, c.PURL}[(i+w)%2]
				if st, got := c.Do("GET", base, p, nil, nil); st != 200 || string(got) != string(want[p]) {
					fails(fmt.Sprintf("GET %s via %s: %d %.200s", p, base, st, got))
				}
			}
		})
	}
	time.Sleep(200 * time.Millisecond)
	var dr wire.DrainReport
	c.Admin(wire.PathAdminDrain, wire.DrainRequest{Server: victim}, &dr)
	close(stop)
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("%d requests failed during the drain, first: %s", len(failures), failures[0])
	}
	if dr.State != "retired" || dr.Left != 0 || len(dr.Problems) != 0 || dr.Moved == 0 {
		t.Fatalf("drain: %+v", dr)
	}
	for p, data := range want {
		c.MustGet(p, data)
	}
	deadline := time.Now().Add(15 * time.Second)
	for len(c.Objects(victim)) > 0 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	if left := c.Objects(victim); len(left) > 0 {
		t.Fatalf("%s still holds %d objects after its garbage was due", victim, len(left))
	}

	// A gw killed mid-PUT: the client has sent half the body.
	pr, pw := io.Pipe()
	req, _ := http.NewRequest("PUT", c.PURL+"/d/half", pr)
	req.ContentLength = 1 << 20
	done := make(chan int, 1)
	go func() {
		resp, err := testsystem.HTTPClient.Do(req)
		if err != nil {
			done <- 0
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	pw.Write(storetest.Data(9, 300_000))
	time.Sleep(200 * time.Millisecond)
	go c.GW.Close()
	time.Sleep(200 * time.Millisecond)
	pw.CloseWithError(io.ErrUnexpectedEOF) // the client gives up too
	if st := <-done; st >= 200 && st < 300 {
		t.Fatalf("PUT through a killed gw answered %d", st)
	}
	if _, err := c.DB.Stat(context.Background(), "/d/half"); !shoal.IsKind(err, shoal.KindNotFound) {
		t.Fatalf("half-written file visible: %v", err)
	}
	rep, err := jobs.Fsck(context.Background(), c.Env(), nil)
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
