package gw

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"shoal/storetest"
	"shoal/wire"
)

// TestPutClientDies: a client that sends part of a PUT body and hangs up
// leaves no shard (and no temp file) on any server, and the id is free.
func TestPutClientDies(t *testing.T) {
	c := startCluster(t, 6)
	_, gwURL := gateway(t, c, 64<<10)
	id := "dead01"
	raw := wire.GatewayURL(c.Keys, gwURL, "PUT", id, "", ec42, c.IDs(), time.Now().Add(time.Minute))
	u, _ := url.Parse(raw)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	const total, sent = 10 << 20, 3<<20 + 123
	fmt.Fprintf(conn, "PUT %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n\r\n", u.RequestURI(), u.Host, total)
	if _, err := conn.Write(storetest.Data(7, sent)); err != nil {
		t.Fatal(err)
	}
	// The shards are in flight: the servers are writing them.
	uploads := func() int64 {
		n := int64(0)
		for _, d := range c.Disks {
			n += d.Uploads()
		}
		return n
	}
	for range 100 {
		if uploads() > 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if uploads() == 0 {
		t.Fatal("no shard being written while the PUT streams")
	}
	conn.Close()

	deadline := time.Now().Add(10 * time.Second)
	for {
		var left []string
		for _, d := range c.Disks {
			walkFiles(d.Dir, func(p string) {
				if strings.HasSuffix(p, "/"+id) || strings.Contains(p[len(d.Dir):], "tmp/") {
					left = append(left, p)
				}
			})
		}
		if len(left) == 0 && uploads() == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the client died, left: %v", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Nothing to read, and the id can be written again.
	if st, _, _ := httpDo(t, "GET", wire.GatewayURL(c.Keys, gwURL, "GET", id, "", ec42, c.IDs(), time.Now().Add(time.Minute)), nil, nil); st != 404 {
		t.Errorf("GET after aborted PUT: %d, want 404", st)
	}
	data := storetest.Data(8, 100_000)
	if st, _, body := httpDo(t, "PUT", raw, strings.NewReader(string(data)), nil); st != 201 {
		t.Errorf("PUT after aborted PUT: %d %s", st, body)
	}
}
