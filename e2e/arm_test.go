package e2e

// The ARM builds, proven under emulation: `shoal all` cross-built for
// linux/arm (GOARM=6, the Pi Zero/1) and linux/arm64 runs under qemu-user on
// loopback, and a client puts, stats (HEAD, PROPFIND), lists, gets and
// deletes files over HTTP with the bytes compared; the operator endpoints
// (/.shoal/healthz, /.shoal/metrics) and `shoal admin status` answer too.
// The same steps run against the native binary.

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// emulated is one cross-build and the qemu-user program that runs it.
type emulated struct {
	name, goarch, goarm, qemu string
}

var emulatedTargets = []emulated{
	{"armv6", "arm", "6", "qemu-arm"},
	{"arm64", "arm64", "", "qemu-aarch64"},
}

func TestEmulatedSmoke(t *testing.T) {
	t.Run("native", func(t *testing.T) { smoke(t, []string{shoalBin}, "") })
	for _, tg := range emulatedTargets {
		t.Run(tg.name, func(t *testing.T) {
			if testing.Short() {
				t.Skip("-short: emulated runs take a minute each")
			}
			qemu := need(t, tg.qemu)
			bin := filepath.Join(t.TempDir(), "shoal-linux-"+tg.name)
			// -trimpath, as `make cross` (deploy's guide) and `make
			// test-arm` build: with the same flags the three share the
			// compiled packages of a target (see ARM_GO in the Makefile).
			build := exec.Command("go", "build", "-trimpath", "-o", bin, "shoal/cmd/shoal")
			build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+tg.goarch, "GOARM="+tg.goarm)
			if out, err := build.CombinedOutput(); err != nil {
				t.Fatalf("cross-building for %s: %v\n%s", tg.name, err, out)
			}
			smoke(t, []string{qemu, bin}, tg.goarch)
		})
	}
}

// smoke runs argv (the binary, perhaps behind qemu) as `shoal all` and
// drives it as a client would. goarch, when set, is the architecture the
// binary must report.
func smoke(t *testing.T, argv []string, goarch string) {
	start := time.Now()
	out, code := run(t, "", nil, argv[0], append(argv[1:], "version")...)
	if code != 0 || (goarch != "" && !strings.Contains(out, "linux/"+goarch)) {
		t.Fatalf("version: exit %d, output %q (want linux/%s)", code, out, goarch)
	}
	n := startBinary(t, argv, t.TempDir())
	c := &http.Client{Timeout: 2 * time.Minute}

	files := map[string][]byte{"/small.txt": smokeBytes(100), "/dir/mid.bin": smokeBytes(64 << 10), "/dir/big.bin": smokeBytes(1 << 20)}
	if got := smokeDo(t, c, "MKCOL", n.URL+"/dir/", nil, nil); got.code != http.StatusCreated {
		t.Fatalf("MKCOL /dir/: %d %s", got.code, got.body)
	}
	for p, b := range files {
		if got := smokeDo(t, c, "PUT", n.URL+p, b, nil); got.code != http.StatusCreated {
			t.Fatalf("PUT %s: %d %s", p, got.code, got.body)
		}
	}
	for p, b := range files {
		got := smokeDo(t, c, "HEAD", n.URL+p, nil, nil)
		if got.code != http.StatusOK || got.header.Get("Content-Length") != fmt.Sprint(len(b)) {
			t.Errorf("HEAD %s: %d, Content-Length %q, want 200 and %d", p, got.code, got.header.Get("Content-Length"), len(b))
		}
		got = smokeDo(t, c, "PROPFIND", n.URL+p, nil, map[string]string{"Depth": "0"})
		if got.code != http.StatusMultiStatus || !strings.Contains(got.body, fmt.Sprintf("getcontentlength>%d<", len(b))) {
			t.Errorf("PROPFIND Depth 0 %s: %d %s", p, got.code, got.body)
		}
		got = smokeDo(t, c, "GET", n.URL+p, nil, nil) // md serves its own data server's files (all.local_data)
		if got.code != http.StatusOK || got.body != string(b) {
			t.Errorf("GET %s: %d, %d bytes, want 200 and the %d bytes put", p, got.code, len(got.body), len(b))
		}
	}
	list := smokeDo(t, c, "PROPFIND", n.URL+"/dir/", nil, map[string]string{"Depth": "1"})
	if list.code != http.StatusMultiStatus || !strings.Contains(list.body, "/dir/mid.bin<") || !strings.Contains(list.body, "/dir/big.bin<") {
		t.Errorf("PROPFIND Depth 1 /dir/: %d %s", list.code, list.body)
	}

	if got := smokeDo(t, c, "GET", n.URL+"/.shoal/healthz", nil, nil); got.code != http.StatusOK || got.body != "ok\n" {
		t.Errorf("md healthz: %d %q", got.code, got.body)
	}
	if got := smokeDo(t, c, "GET", n.DiskURL+"/.shoal/healthz", nil, nil); got.code != http.StatusOK || got.body != "ok\n" {
		t.Errorf("disk healthz: %d %q", got.code, got.body)
	}
	metrics := smokeDo(t, c, "GET", n.URL+"/.shoal/metrics", nil, nil)
	for _, want := range []string{
		`shoal_http_requests_total{component="md",method="PUT",code="201"} 3`,
		`shoal_http_requests_total{component="md",method="GET",code="200"} 3`,
		`shoal_catalog_round_trips_total `,
		`shoal_disk_free_bytes{server=`,
		`goarch="` + goarchOr(goarch) + `"`,
	} {
		if !strings.Contains(metrics.body, want) {
			t.Errorf("metrics: missing %q in\n%s", want, metrics.body)
		}
	}
	status, code := run(t, "", nil, argv[0], append(argv[1:], "admin", "--md", n.URL, "--secret-file", filepath.Join(n.Data, "secret"), "status")...)
	if code != 0 || !strings.Contains(status, "status  healthy") {
		t.Errorf("admin status: exit %d\n%s", code, status)
	}

	for p := range files {
		if got := smokeDo(t, c, "DELETE", n.URL+p, nil, nil); got.code != http.StatusNoContent {
			t.Errorf("DELETE %s: %d %s", p, got.code, got.body)
		}
		if got := smokeDo(t, c, "HEAD", n.URL+p, nil, nil); got.code != http.StatusNotFound {
			t.Errorf("HEAD %s after DELETE: %d, want 404", p, got.code)
		}
	}
	list = smokeDo(t, c, "PROPFIND", n.URL+"/dir/", nil, map[string]string{"Depth": "1"})
	if strings.Contains(list.body, ".bin<") {
		t.Errorf("deleted files still listed: %s", list.body)
	}
	if code := n.stop(t); code != 0 {
		t.Errorf("exit code after SIGTERM: %d, want 0", code)
	}
	t.Logf("%s: %v", strings.Join(argv, " "), time.Since(start).Round(time.Second))
}

func goarchOr(goarch string) string {
	if goarch == "" {
		out, _ := exec.Command("go", "env", "GOARCH").Output()
		return strings.TrimSpace(string(out))
	}
	return goarch
}

func smokeBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

type smokeReply struct {
	code   int
	header http.Header
	body   string
}

func smokeDo(t *testing.T, c *http.Client, method, url string, body []byte, header map[string]string) smokeReply {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body == nil {
		req.Body, req.ContentLength = nil, 0
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", method, url, err)
	}
	return smokeReply{resp.StatusCode, resp.Header, string(b)}
}

// startBinary runs argv + `all` on loopback random ports over data and
// waits (up to 3 minutes: emulation is slow) for its URLs and "ready".
func startBinary(t *testing.T, argv []string, data string) *node {
	t.Helper()
	cmd := exec.Command(argv[0], append(argv[1:], "all", "--data", data, "--listen", "127.0.0.1:0", "--disk-listen", "127.0.0.1:0")...)
	return runNode(t, cmd, data, argv[0], 3*time.Minute)
}
