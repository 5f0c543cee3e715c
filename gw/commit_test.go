package gw_test

import (
	"bytes"
	"context"
	"net"
	"path/filepath"
	"testing"
	"time"

	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"shoal"
	"shoal/catalog"
	"shoal/diskserver"
	"shoal/gw"
	"shoal/md"
	"shoal/sign"
	"shoal/storetest"
	"shoal/wire"
)

// This test lives in package gw_test: it runs md, which gw must not
// import, with a gw and data servers.

var ec42 = shoal.Layout{Kind: shoal.LayoutEC, K: 4, M: 2}

type disk struct{ id, dir, url string }

func startDisks(t *testing.T, keys *sign.Keys, n int) []disk {
	var out []disk
	for i := range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		d := disk{id: fmt.Sprintf("ds%d", i), dir: t.TempDir(), url: "http://" + ln.Addr().String()}
		srv, err := diskserver.New(diskserver.Options{ID: d.id, Dirs: []string{d.dir}, Keys: keys, PublicURL: d.url, ReserveBytes: -1})
		if err != nil {
			t.Fatal(err)
		}
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Close() })
		out = append(out, d)
	}
	return out
}

func httpDo(t *testing.T, method, url string, body io.Reader) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// TestCommitThroughMD: a real md over SQLite knows the six diskservers
// (their heartbeats); the gw finds them through md's server list, and a PUT
// with an upload id commits one replica per shard. A PUT whose commit md
// refuses gets md's status and leaves no shard; with md down, a 503 with
// Retry-After.
func TestCommitThroughMD(t *testing.T) {
	ctx := context.Background()
	keys := sign.Random()
	disks := startDisks(t, keys, 6)
	var ids []string
	for _, d := range disks {
		ids = append(ids, d.id)
	}
	cat, err := catalog.Open(ctx, catalog.Options{DSN: "sqlite:" + filepath.Join(t.TempDir(), "cat.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	mdSrv, err := md.New(md.Options{Catalog: cat, Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mdURL := "http://" + ln.Addr().String()
	go mdSrv.Serve(ln)
	t.Cleanup(func() { mdSrv.Close() })
	wc := wire.NewClient(mdURL, keys)
	for _, d := range disks {
		if _, err := wc.Call(wire.PathHeartbeat, wire.Heartbeat{ID: d.id, URL: d.url, Free: 1 << 30, Total: 1 << 30}, nil); err != nil {
			t.Fatal(err)
		}
	}
	// The gw: no static server map, everything from md.
	gln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gwURL := "http://" + gln.Addr().String()
	g, err := gw.NewServer(gw.ServerOptions{ID: "gw0", PublicURL: gwURL, MDURL: mdURL, Keys: keys, StripeSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	go g.Serve(gln)
	t.Cleanup(func() { g.Close() })

	up := &shoal.Upload{ID: "0a0b", Path: "/ec.bin", Servers: ids, Object: "e1", Layout: ec42, Expires: time.Now().Add(time.Minute)}
	if err := cat.BeginUpload(ctx, up); err != nil {
		t.Fatal(err)
	}
	data := storetest.Data(42, 300_001)
	put := wire.GatewayURL(keys, gwURL, "PUT", "e1", up.ID, ec42, ids, time.Now().Add(time.Minute))
	if st, body := httpDo(t, "PUT", put, bytes.NewReader(data)); st != 201 {
		t.Fatalf("PUT with upload: %d %s", st, body)
	}
	e, err := cat.Stat(ctx, "/ec.bin")
	if err != nil {
		t.Fatal(err)
	}
	if e.Size != int64(len(data)) || len(e.Replicas) != 6 || e.Layout != ec42 {
		t.Fatalf("entry: size %d, %d replicas, layout %v", e.Size, len(e.Replicas), e.Layout)
	}
	for _, r := range e.Replicas {
		if r.Server != ids[r.Shard] || r.Object != "e1" || r.Size <= 0 {
			t.Errorf("replica %+v", r)
		}
	}
	get := wire.GatewayURL(keys, gwURL, "GET", "e1", "", ec42, ids, time.Now().Add(time.Minute))
	if st, got := httpDo(t, "GET", get, nil); st != 200 || !bytes.Equal(got, data) {
		t.Fatalf("GET committed file: %d, equal %v", st, bytes.Equal(got, data))
	}
	// The gw registered itself.
	servers, err := cat.Servers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range servers {
		found = found || s.ID == "gw0" && s.Pool == gw.DefaultPool && s.URL == gwURL
	}
	if !found {
		t.Errorf("gw0 not registered with md: %+v", servers)
	}

	// An upload md does not know: md's refusal is relayed, no shard stays.
	bad := wire.GatewayURL(keys, gwURL, "PUT", "e2", "ffff", ec42, ids, time.Now().Add(time.Minute))
	st, body := httpDo(t, "PUT", bad, bytes.NewReader(data))
	if st < 400 || st == 500 {
		t.Errorf("PUT with unknown upload: %d %s, want md's 4xx", st, body)
	}
	left := func(what, id string) {
		t.Helper()
		for _, d := range disks {
			filepath.Walk(d.dir, func(p string, fi os.FileInfo, err error) error {
				if err == nil && !fi.IsDir() && (fi.Name() == id || strings.Contains(p[len(d.dir):], "tmp/")) {
					t.Errorf("left after %s: %s", what, p)
				}
				return nil
			})
		}
	}
	left("a refused commit", "e2")

	// md gone: the commit cannot be made, the client gets 503 with
	// Retry-After (and the kind), and no shard stays.
	mdSrv.Close()
	up3 := &shoal.Upload{ID: "0c0d", Path: "/ec3.bin", Servers: ids, Object: "e3", Layout: ec42, Expires: time.Now().Add(time.Minute)}
	if err := cat.BeginUpload(ctx, up3); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("PUT", wire.GatewayURL(keys, gwURL, "PUT", "e3", up3.ID, ec42, ids, time.Now().Add(time.Minute)), bytes.NewReader(data))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || resp.Header.Get(wire.HeaderKind) != shoal.KindUnavailable.String() {
		t.Errorf("PUT with md down: %d, Retry-After %q, %s %q; want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"), wire.HeaderKind, resp.Header.Get(wire.HeaderKind))
	}
	left("a commit to an md that is down", "e3")
}
