package gw

import (
	"bytes"
	"testing"
	"time"

	"shoal"
	"shoal/storetest"
	"shoal/wire"
)

// TestDegradedURL: a URL that leaves out ec:4+2's last shard (an empty
// server id, as md's degraded writes sign it) writes five shards and reads
// back whole, also with one more server down; leaving out M shards, or a
// replica, is refused (400).
func TestDegradedURL(t *testing.T) {
	const stripe = 32 << 10
	c := startCluster(t, 5)
	_, gwURL := gateway(t, c, stripe)
	ids := append(c.IDs(), "")
	url := func(method, id string, layout shoal.Layout, servers []string) string {
		return wire.GatewayURL(c.Keys, gwURL, method, id, "", layout, servers, time.Now().Add(time.Minute))
	}
	data := storetest.Data(7, 5*stripe+123)
	if st, _, body := httpDo(t, "PUT", url("PUT", "d1", ec42, ids), bytes.NewReader(data), nil); st != 201 {
		t.Fatalf("PUT with shard 5 left out: %d %s", st, body)
	}
	for i := range 5 {
		c.Disks[i].Stop()
		st, _, got := httpDo(t, "GET", url("GET", "d1", ec42, ids), nil, nil)
		if st != 200 || !bytes.Equal(got, data) {
			t.Fatalf("GET with shard 5 left out and server %d down: %d, equal %v", i, st, bytes.Equal(got, data))
		}
		c.Disks[i].Start()
	}
	replica2, _ := shoal.ParseLayout("replica:2")
	for _, bad := range []struct {
		what    string
		layout  shoal.Layout
		servers []string
	}{
		{"two of ec:4+2's shards left out", ec42, append(c.IDs()[:4], "", "")},
		{"a replica left out", replica2, []string{c.IDs()[0], ""}},
		{"a repeated server", ec42, append(c.IDs(), c.IDs()[0])},
	} {
		if st, _, body := httpDo(t, "PUT", url("PUT", "d2", bad.layout, bad.servers), bytes.NewReader(data), nil); st != 400 {
			t.Errorf("PUT with %s: %d %s, want 400", bad.what, st, body)
		}
	}
}
