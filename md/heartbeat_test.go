package md

import (
	"context"
	"testing"
	"time"

	"shoal"
	"shoal/wire"
)

// TestHeartbeatWritesCoalesced: md writes a server's heartbeat to the
// catalog at most every ServerTTL/6 while nothing changed (each write is a
// durable commit; fast heartbeats from many servers made the catalog's
// writer the bottleneck and aged servers out), but at once when the
// server's URL or pool changes or it fills up.
func TestHeartbeatWritesCoalesced(t *testing.T) {
	e := newEnv(t, DataProxy, func(o *Options) { o.ServerTTL = 6 * time.Second }) // writes at most every second
	wc := wire.NewClient(e.url, e.keys)
	seen := func() shoal.Server {
		t.Helper()
		servers, err := e.db.Servers(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range servers {
			if s.ID == "hx" {
				return s
			}
		}
		t.Fatal("hx not registered")
		return shoal.Server{}
	}
	beat := func(hb wire.Heartbeat) {
		t.Helper()
		if _, err := wc.Call(wire.PathHeartbeat, hb, nil); err != nil {
			t.Fatal(err)
		}
	}
	hb := wire.Heartbeat{ID: "hx", URL: "http://127.0.0.1:1", Pool: "p", Free: 100, Total: 200}
	beat(hb)
	first := seen()
	for range 5 {
		hb.Free--
		beat(hb)
	}
	if got := seen(); !got.LastSeen.Equal(first.LastSeen) || got.Free != 100 {
		t.Errorf("5 heartbeats right after the first were written: %+v, first %+v", got, first)
	}
	hb.Pool = "q"
	beat(hb)
	if got := seen(); got.Pool != "q" {
		t.Errorf("a heartbeat with a new pool was not written: %+v", got)
	}
	at := seen().LastSeen
	hb.Free = 0
	beat(hb)
	if got := seen(); got.Free != 0 || !got.LastSeen.After(at) {
		t.Errorf("a heartbeat saying the server is full was not written: %+v", got)
	}
	time.Sleep(1100 * time.Millisecond)
	at = seen().LastSeen
	beat(hb)
	beat(hb)
	if got := seen(); !got.LastSeen.After(at) {
		t.Errorf("no heartbeat written a second after the last: %+v", got)
	}
}
