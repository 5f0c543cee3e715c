package md_test

import (
	"context"
	"testing"

	"shoal"
	"shoal/internal/testsystem"
	"shoal/storetest"
	"shoal/wire"
)

// TestReplica2Cluster: replica:2 files get two copies on two servers
// before the PUT is answered; with one down, reads go on (proxy at once,
// redirect once md sees it dead); PROPPATCH of shoal:pool maps a
// directory.
func TestReplica2Cluster(t *testing.T) {
	c := testsystem.New(t)
	c.AddDisks("r2", 3)
	c.Admin(wire.PathAdminPoolAdd, wire.PoolAddRequest{Name: "r2", Layout: "replica:2"}, nil)
	if st, _ := c.Do("MKCOL", c.RURL, "/r", nil, nil); st != 201 {
		t.Fatal("MKCOL")
	}
	patch := `<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><s:pool xmlns:s="http://shoal.dev/ns">r2</s:pool></D:prop></D:set></D:propertyupdate>`
	if st, body := c.Do("PROPPATCH", c.RURL, "/r", nil, []byte(patch)); st != 207 {
		t.Fatalf("PROPPATCH shoal:pool: %d %s", st, body)
	}
	var pools []shoal.Pool
	c.Admin(wire.PathAdminPools, struct{}{}, &pools)
	if len(pools) != 2 || pools[1].Name != "r2" {
		t.Fatalf("pools: %+v", pools)
	}
	data := storetest.Data(5, 300_000)
	for _, base := range []string{c.RURL, c.PURL} {
		if st, body := c.Do("PUT", base, "/r/f", nil, data); st != 201 && st != 204 {
			t.Fatalf("PUT via %s: %d %s", base, st, body)
		}
	}
	e, err := c.DB.Stat(context.Background(), "/r/f")
	if err != nil {
		t.Fatal(err)
	}
	if e.Layout.String() != "replica:2" || len(e.Replicas) != 2 || e.Replicas[0].Server == e.Replicas[1].Server {
		t.Fatalf("entry: %v %+v", e.Layout, e.Replicas)
	}
	for _, r := range e.Replicas { // both copies are durable and whole on disk
		if got := c.ObjectFile(r.Server, r.Object); got == "" {
			t.Fatal("copy missing")
		}
	}
	c.Kill(e.Replicas[0].Server)
	st, got := c.Do("GET", c.PURL, "/r/f", nil, nil)
	if st != 200 || string(got) != string(data) {
		t.Fatalf("proxied GET with one copy down: %d", st)
	}
	c.WaitDead()
	c.MustGet("/r/f", data)
}
