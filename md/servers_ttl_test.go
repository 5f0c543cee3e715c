package md

import (
	"testing"
	"time"

	"shoal/wire"
)

// TestServersSayTTL: md's server list comes with its md.server_ttl, so
// that shoal admin status counts a server live as md does; it used the
// default 10 s, and called a server down (status 1) that md took
// writes on, where md.server_ttl was raised for a slower heartbeat.
func TestServersSayTTL(t *testing.T) {
	e := newEnv(t, DataProxy, func(o *Options) { o.ServerTTL = 45 * time.Second })
	servers, ttl, err := wire.NewClient(e.url, e.keys).Servers()
	if err != nil || ttl != 45*time.Second || len(servers) == 0 {
		t.Errorf("Servers: %d servers, ttl %v, %v; want md's 45s", len(servers), ttl, err)
	}
}
