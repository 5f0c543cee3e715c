package gw

import (
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"shoal/catalog"
	"shoal/md"
	"shoal/sign"
)

// TestHealthNeedsMDsServerList: a gw that cannot fetch md's list of data
// servers can serve no file, and its health says so; once md answers, the
// next probe fetches the list itself and is ok, without waiting for the
// refresh loop (an hour here). Without an md there is nothing to wait for.
func TestHealthNeedsMDsServerList(t *testing.T) {
	keys := sign.Random()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nobody answers there yet: md is down
	g, err := NewServer(ServerOptions{ID: "gw-h", PublicURL: "http://127.0.0.1:1", MDURL: "http://" + addr, Keys: keys, RefreshInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Health(t.Context()); err == nil || !strings.Contains(err.Error(), "no server list from md") {
		t.Errorf("health with md down: %v, want no server list from md", err)
	}

	cat, err := catalog.Open(t.Context(), catalog.Options{DSN: "sqlite:" + filepath.Join(t.TempDir(), "cat.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	mdSrv, err := md.New(md.Options{Catalog: cat, Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	if ln, err = net.Listen("tcp", addr); err != nil {
		t.Skipf("md's port was taken meanwhile: %v", err)
	}
	go mdSrv.Serve(ln)
	t.Cleanup(func() { mdSrv.Close() })
	if err := g.Health(t.Context()); err != nil {
		t.Errorf("health with md up: %v, want ok", err)
	}

	g, err = NewServer(ServerOptions{ID: "gw-s", PublicURL: "http://127.0.0.1:1", Keys: keys, Servers: map[string]string{"d1": "http://127.0.0.1:1"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Health(t.Context()); err != nil {
		t.Errorf("health without md: %v, want ok", err)
	}
}
