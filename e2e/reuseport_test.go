package e2e

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"shoal/internal/testsvc"
)

// Two `shoal md --reuseport` share one port and both answer. Each has a
// catalog of its own (SQLite) so that answers tell them apart: /one
// exists only for the first, so over fresh connections some HEADs get 200
// (first md) and some 404 (second md). Without --reuseport the second
// cannot bind.
func TestMDReusePort(t *testing.T) {
	port, err := testsvc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	secret := writeSecret(t, "k1 0123456789abcdef0123456789abcdef\n")
	dir := t.TempDir()
	first := startProc(t, nil, "md", "--listen", addr, "--reuseport", "--catalog", "sqlite:"+filepath.Join(dir, "a.db"), "--secret-file", secret)
	if got := do("PUT", first.URL+"/one", "1"); got.status != 201 {
		t.Fatalf("PUT /one through the first md = %v", got)
	}
	startProc(t, nil, "md", "--listen", addr, "--reuseport", "--catalog", "sqlite:"+filepath.Join(dir, "b.db"), "--secret-file", secret)

	fresh := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	seen := map[int]int{}
	for i := 0; i < 200 && (seen[200] == 0 || seen[404] == 0); i++ {
		resp, err := fresh.Head("http://" + addr + "/one")
		if err != nil {
			t.Fatalf("HEAD /one on the shared port: %v", err)
		}
		resp.Body.Close()
		seen[resp.StatusCode]++
	}
	if seen[200] == 0 || seen[404] == 0 || len(seen) != 2 {
		t.Errorf("HEAD /one over fresh connections to the shared port: statuses %v, want both 200 (first md) and 404 (second md)", seen)
	}

	// Without --reuseport, the port is taken.
	p := startProcExpectExit(t, "md", "--listen", addr, "--catalog", "sqlite:"+filepath.Join(dir, "c.db"), "--secret-file", secret)
	if !strings.Contains(p, "address already in use") {
		t.Errorf("md without --reuseport on a shared port: %q, want an address-in-use error", p)
	}
}

// startProcExpectExit runs `shoal ARGS…`, which must exit non-zero, and returns
// its output.
func startProcExpectExit(t *testing.T, args ...string) string {
	t.Helper()
	out, code := run(t, "", nil, shoalBin, args...)
	if code == 0 {
		t.Errorf("shoal %v exited 0", args)
	}
	return out
}
