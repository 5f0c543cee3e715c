package gw

import (
	"testing"

	"shoal/internal/testcluster"
	"shoal/internal/testhttp"
)

// startCluster starts n real diskservers.
var startCluster = testcluster.Start

// gateway starts a gw.Server over the cluster (static server map, no md).
func gateway(t testing.TB, c *testcluster.Cluster, stripe int) (*Server, string) {
	t.Helper()
	ln, url := testhttp.Listen(t)
	srv, err := NewServer(ServerOptions{ID: "gw0", PublicURL: url, Keys: c.Keys, StripeSize: stripe, Servers: c.URLs()})
	if err != nil {
		t.Fatal(err)
	}
	testhttp.Serve(t, srv, ln)
	return srv, url
}
