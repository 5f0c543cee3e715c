package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// startECBox runs `shoal all` over three data directories with the
// ec:2+1 layout (a data server each and a built-in gw), md in proxy mode
// so that object bodies go through the gw on md's URL; it returns the
// node and the secret file of `shoal admin`.
func startECBox(t *testing.T) (*node, string) {
	t.Helper()
	root := t.TempDir()
	dirs := []string{filepath.Join(root, "d1"), filepath.Join(root, "d2"), filepath.Join(root, "d3")}
	cmd := exec.Command(shoalBin, "all", "--data", strings.Join(dirs, ","), "--layout", "ec:2+1",
		"--listen", "127.0.0.1:0", "--disk-listen", "127.0.0.1:0", "--log-level", "debug")
	cmd.Env = append(os.Environ(), "SHOAL_MD_DATA_MODE=proxy")
	n := runNode(t, cmd, dirs[0], "shoal all (ec:2+1, 3 disks)", 60*time.Second)
	if n.GWURL == "" {
		t.Fatal("shoal all with 3 data directories printed no gw URL")
	}
	return n, filepath.Join(dirs[0], "secret")
}

// TestStatusWithGW: a gw answers /.shoal/healthz and /.shoal/metrics like
// a data server, so `shoal admin status` on `shoal all --layout ec:2+1`
// (3 data servers and a gw) is healthy, exit 0. Before, the gw answered
// 404 there and status was UNHEALTHY on every cluster with a gw.
func TestStatusWithGW(t *testing.T) {
	n, secret := startECBox(t)
	if r := do("GET", n.GWURL+"/.shoal/healthz", ""); r.status != 200 || strings.TrimSpace(r.body) != "ok" {
		t.Errorf("gw healthz: %d %q, want 200 ok", r.status, r.body)
	}
	if r := putBody(n.URL+"/f", make([]byte, 200_000), false); r.status != 201 {
		t.Fatalf("PUT of an ec:2+1 file: %s", r)
	}
	m := do("GET", n.GWURL+"/.shoal/metrics", "")
	if m.status != 200 || !strings.Contains(m.body, `shoal_http_requests_total{component="gw",method="PUT",code="201"} 1`) {
		t.Errorf("gw metrics: %d, no PUT counted:\n%s", m.status, grepLines(m.body, "shoal_http_requests_total"))
	}
	out, code := run(t, "", nil, shoalBin, "admin", "--md", n.URL, "--secret-file", secret, "status")
	if code != 0 || !strings.Contains(out, "status  healthy") || strings.Contains(out, "not found") {
		t.Errorf("admin status with a gw: exit %d, want 0 and healthy:\n%s", code, out)
	}
}
