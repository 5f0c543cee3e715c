package md

import (
	"context"
	"crypto/tls"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/catalog"
	"shoal/internal/testhttp"
	"shoal/sign"
	"shoal/tlsconf"
	"shoal/wire"
)

// tlsPeer serves a constant answer over TLS with a certificate of ca for
// 127.0.0.1 and returns its https URL.
func tlsPeer(t *testing.T, ca *tlsconf.CA) string {
	t.Helper()
	ln, url := testhttp.ListenTLS(t, ca)
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {}}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Shutdown() })
	return url
}

// TestPeerTLS: with Options.PeerTLS (the cluster runs TLS), md takes the
// heartbeat of a server serving https with a certificate of the cluster
// CA, and refuses, with 403 and a reason, one with a certificate of
// another CA and one advertising plain http — both signed with the
// cluster secret — so neither is ever live or chosen for a write.
func TestPeerTLS(t *testing.T) {
	ctx := context.Background()
	db, err := catalog.Open(ctx, catalog.Options{DSN: "sqlite:" + filepath.Join(t.TempDir(), "catalog.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	clusterCA, err := tlsconf.NewCA("cluster CA")
	if err != nil {
		t.Fatal(err)
	}
	otherCA, err := tlsconf.NewCA("another CA")
	if err != nil {
		t.Fatal(err)
	}
	keys := sign.Random()
	m, err := New(Options{Catalog: db, Keys: keys, PeerTLS: &tls.Config{RootCAs: clusterCA.Pool(), MinVersion: tls.VersionTLS12}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go m.Serve(ln)
	cl := wire.NewClient("http://"+ln.Addr().String(), keys)

	good, bad := tlsPeer(t, clusterCA), tlsPeer(t, otherCA)
	plain := "http://" + strings.TrimPrefix(good, "https://")
	for _, tc := range []struct {
		id, url string
		ok      bool
		reason  string
	}{
		{"good", good, true, ""},
		{"other-ca", bad, false, "certificate"},
		{"plain", plain, false, "must serve https"},
		{"good", good, true, ""}, // verified once, then remembered
	} {
		status, err := cl.Call(wire.PathHeartbeat, wire.Heartbeat{ID: tc.id, URL: tc.url, Free: 1 << 30, Total: 1 << 30}, nil)
		if tc.ok != (err == nil) {
			t.Fatalf("%s heartbeat: status %d, %v", tc.id, status, err)
		}
		if !tc.ok && (status != 403 || !shoal.IsKind(err, shoal.KindPermission) || !strings.Contains(err.Error(), tc.reason)) {
			t.Errorf("%s refused with %d %v, want 403 naming %q", tc.id, status, err, tc.reason)
		}
	}
	servers, err := db.Servers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(servers) != 1 || servers[0].ID != "good" {
		t.Fatalf("registered servers: %+v, want only the one the cluster CA signed", servers)
	}
}
