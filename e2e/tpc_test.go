package e2e

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"fmt"
	"hash/adler32"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"shoal/internal/testissuer"
	"shoal/internal/tpcpeer"
	"shoal/tpc"
)

// Third-party copy with the real binary and real clients: davix-cp in
// both modes between two `shoal all` with bearer tokens, nginx as a
// non-shoal source and destination, the marker cadence of a 256 MiB
// copy, and every failure the issue lists.

// tpcNode starts `shoal all` with the tpc section (loopback allowed:
// the peers are on this host) plus yaml.
func tpcNode(t *testing.T, yaml string, env ...string) *node {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "shoal.yaml")
	if err := os.WriteFile(cfg, []byte("tpc:\n  allow_local: true\n"+yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return startShoalArgs(t, "", []string{"--config", cfg}, env...)
}

// putFile stores data at u (md, following its 307) with cred.
func putFile(t *testing.T, u, cred string, data []byte) {
	t.Helper()
	req, _ := http.NewRequest("PUT", u, bytes.NewReader(data))
	if cred != "" {
		req.Header.Set("Authorization", cred)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 201 && resp.StatusCode != 204 {
		t.Fatalf("PUT %s: %d", u, resp.StatusCode)
	}
}

// getFile reads u (md, following its 302) with cred: status and bytes.
func getFile(t *testing.T, u, cred string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", u, nil)
	if cred != "" {
		req.Header.Set("Authorization", cred)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// digest is the Digest md gives for u (HEAD with Want-Digest).
func digest(t *testing.T, u, cred string) string {
	t.Helper()
	return send(t, "HEAD", u, cred, map[string]string{"Want-Digest": "adler32,md5"}, nil).Header.Get("Digest")
}

// tpcCopy sends a COPY to u with hdr, follows 3xx as davix does (the
// same headers on every hop) and reads the marker stream as davix does,
// noting when each marker arrived. It returns the last status, the
// outcome and the arrival times.
func tpcCopy(t *testing.T, u string, hdr map[string]string) (int, tpc.Outcome, []time.Time) {
	t.Helper()
	for hop := 0; hop < 5; hop++ {
		req, _ := http.NewRequest("COPY", u, nil)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if loc := resp.Header.Get("Location"); resp.StatusCode/100 == 3 && loc != "" {
			resp.Body.Close()
			u = loc
			continue
		}
		defer resp.Body.Close()
		if resp.StatusCode != 202 {
			return resp.StatusCode, tpc.Outcome{}, nil
		}
		var at []time.Time
		out, err := tpc.ReadStream(resp.Body, func(tpc.Marker) { at = append(at, time.Now()) })
		if err != nil {
			t.Fatalf("COPY %s: the stream: %v", u, err)
		}
		return 202, out, at
	}
	t.Fatalf("COPY %s: too many redirects", u)
	return 0, tpc.Outcome{}, nil
}

// metricValue is the value of the sample that starts with prefix on n's
// /.shoal/metrics, or "".
func metricValue(t *testing.T, n *node, prefix string) string {
	t.Helper()
	_, b := getFile(t, n.URL+"/.shoal/metrics", "")
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, prefix+" ") {
			return strings.TrimPrefix(line, prefix+" ")
		}
	}
	return ""
}

// TestTPCDavix: davix-cp --copy-mode pull and push between two shoal
// all, A → B and B → A, with bearer tokens: Authorization for the server
// davix talks to, TransferHeaderAuthorization for the other. The copies
// are byte-exact with equal digests; without the transfer token the
// other side refuses and nothing appears; no token reaches a log.
func TestTPCDavix(t *testing.T) {
	davixCp := need(t, "davix-cp")
	is := testissuer.New(t)
	jwks := filepath.Join(t.TempDir(), "issuer.jwks")
	os.WriteFile(jwks, is.JWKS(), 0o600)
	auth := func(aud string) string {
		return fmt.Sprintf("auth:\n  issuers:\n    - {url: %q, jwks_file: %q}\n  audiences: [%q]\n", is.URL, jwks, aud)
	}
	nodes := map[string]*node{"A": tpcNode(t, auth("https://a.tpc.e2e")), "B": tpcNode(t, auth("https://b.tpc.e2e"))}
	var tokens []string
	tok := func(side, scope string) string {
		tk := is.Mint(t, is.WLCG("fts", "https://"+strings.ToLower(side)+".tpc.e2e", scope))
		tokens = append(tokens, tk)
		return "Bearer " + tk
	}
	dir := t.TempDir()
	data := make(map[string][]byte)
	for name, n := range nodes {
		_, data[name] = randomFile(t, dir, name, 3<<20+17)
		putFile(t, n.URL+"/f", tok(name, "storage.modify:/ storage.read:/"), data[name])
		if st := status(t, "MKCOL", n.URL+"/copies", tok(name, "storage.modify:/"), nil); st != 201 {
			t.Fatalf("MKCOL: %d", st)
		}
	}
	for _, tc := range []struct{ from, to, mode string }{
		{"A", "B", "pull"}, {"A", "B", "push"}, {"B", "A", "pull"}, {"B", "A", "push"},
	} {
		from, to := nodes[tc.from], nodes[tc.to]
		readTok, writeTok := tok(tc.from, "storage.read:/f"), tok(tc.to, "storage.create:/copies")
		active, passive := writeTok, readTok // pull: davix talks to the destination
		if tc.mode == "push" {
			active, passive = readTok, writeTok
		}
		dst := to.URL + "/copies/" + tc.from + "-" + tc.mode
		out, code := run(t, dir, nil, davixCp, "--copy-mode", tc.mode, "-H", "Authorization: "+active, "-H", "TransferHeaderAuthorization: "+passive, from.URL+"/f", dst)
		if code != 0 {
			t.Fatalf("davix-cp --copy-mode %s %s → %s: exit %d\n%s", tc.mode, tc.from, tc.to, code, out)
		}
		admin := tok(tc.to, "storage.read:/")
		if st, got := getFile(t, dst, admin); st != 200 || !bytes.Equal(got, data[tc.from]) {
			t.Fatalf("%s %s → %s: GET %d, %d bytes, equal %v", tc.mode, tc.from, tc.to, st, len(got), bytes.Equal(got, data[tc.from]))
		}
		if a, b := digest(t, from.URL+"/f", tok(tc.from, "storage.read:/")), digest(t, dst, admin); a == "" || a != b {
			t.Errorf("%s %s → %s: Digest %q here, %q there", tc.mode, tc.from, tc.to, a, b)
		}
		// Without the transfer token the passive side answers 401: the copy fails, nothing appears.
		miss := to.URL + "/copies/" + tc.from + "-" + tc.mode + "-notoken"
		if out, code := run(t, dir, nil, davixCp, "--copy-mode", tc.mode, "-H", "Authorization: "+active, from.URL+"/f", miss); code == 0 {
			t.Errorf("%s without a transfer token succeeded:\n%s", tc.mode, out)
		}
		if st := status(t, "HEAD", miss, admin, nil); st != 404 {
			t.Errorf("%s without a transfer token: HEAD %d", tc.mode, st)
		}
	}
	// Each node was the active side of one pull (as destination) and one
	// push (as source).
	for name, n := range nodes {
		if v := metricValue(t, n, `shoal_tpc_transfers_total{direction="pull",result="success"}`); v != "1" {
			t.Errorf("%s: pull successes %q", name, v)
		}
		if v := metricValue(t, n, `shoal_tpc_transfers_total{direction="push",result="success"}`); v != "1" {
			t.Errorf("%s: push successes %q", name, v)
		}
		logs := n.stderr.String()
		for _, tk := range tokens {
			if strings.Contains(logs, tk) {
				t.Fatalf("%s logged a token", name)
			}
		}
		if !strings.Contains(logs, "tpc transfer") || strings.Contains(logs, "sig=") {
			t.Errorf("%s: no tpc transfer line, or a signature logged", name)
		}
	}
}

// startNginx runs nginx with WebDAV on loopback (bench/nginx-dav.conf):
// it serves root's files and takes PUTs. It returns its URL and root.
func startNginx(t *testing.T) (string, string) {
	t.Helper()
	bin := need(t, "nginx")
	const module = "/usr/lib/nginx/modules/ngx_http_dav_ext_module.so"
	if _, err := os.Stat(module); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("nginx's WebDAV module is missing (apt-get install libnginx-mod-http-dav-ext): %v", err)
		}
		t.Skip("nginx's WebDAV module is missing")
	}
	tmp := t.TempDir()
	root := filepath.Join(tmp, "root")
	os.Mkdir(root, 0o755)
	addr := freeAddr(t, "127.0.0.1")
	tmpl, err := os.ReadFile("../bench/nginx-dav.conf")
	if err != nil {
		t.Fatal(err)
	}
	user := ""
	if os.Geteuid() == 0 {
		user = "user root;"
	}
	conf := strings.NewReplacer("@USER@", user, "@WORKERS@", "1", "@TMP@", tmp, "@ROOT@", root,
		"@LISTEN@", addr, "@ACCESS_LOG@", "off").Replace(string(tmpl))
	confPath := filepath.Join(tmp, "nginx.conf")
	os.WriteFile(confPath, []byte(conf), 0o644)
	cmd := exec.Command(bin, "-p", tmp, "-c", confPath, "-e", filepath.Join(tmp, "error.log"), "-g", "daemon off;")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// TERM lets the master stop its workers; the group kill is for
		// whatever is left.
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
		}
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	})
	for i := 0; ; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if i == 200 {
			t.Fatalf("nginx did not listen on %s", addr)
		}
		time.Sleep(25 * time.Millisecond)
	}
	return "http://" + addr, root
}

// TestTPCNginx: shoal pulls from an nginx serving static files and
// pushes to an nginx WebDAV server (davix-cp). nginx gives no Digest, so
// the copies need RequireChecksumVerification: false; with the default a
// pull from it fails and leaves nothing.
func TestTPCNginx(t *testing.T) {
	davixCp := need(t, "davix-cp")
	nginx, root := startNginx(t)
	n := tpcNode(t, "")
	dir := t.TempDir()
	_, data := randomFile(t, dir, "static", 5<<20+3)
	os.WriteFile(filepath.Join(root, "static.bin"), data, 0o644)
	noVerify := []string{"-H", "RequireChecksumVerification: false"}

	if out, code := run(t, dir, nil, davixCp, append(noVerify, "--copy-mode", "pull", nginx+"/static.bin", n.URL+"/from-nginx")...); code != 0 {
		t.Fatalf("pull from nginx: %d\n%s", code, out)
	}
	if st, got := getFile(t, n.URL+"/from-nginx", ""); st != 200 || !bytes.Equal(got, data) {
		t.Fatalf("pulled from nginx: %d, %d bytes", st, len(got))
	}
	if out, code := run(t, dir, nil, davixCp, append(noVerify, "--copy-mode", "push", n.URL+"/from-nginx", nginx+"/pushed/by-shoal.bin")...); code != 0 {
		t.Fatalf("push to nginx: %d\n%s", code, out)
	}
	if got, err := os.ReadFile(filepath.Join(root, "pushed", "by-shoal.bin")); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("pushed to nginx: %d bytes, %v", len(got), err)
	}
	out, code := run(t, dir, nil, davixCp, "--copy-mode", "pull", nginx+"/static.bin", n.URL+"/verified")
	if code == 0 || !strings.Contains(out, "RequireChecksumVerification") {
		t.Errorf("pull from nginx with verification: exit %d\n%s", code, out)
	}
	if st := status(t, "HEAD", n.URL+"/verified", "", nil); st != 404 {
		t.Errorf("an unverifiable pull left %d", st)
	}
}

// TestTPCMarkers: a 256 MiB pull from a source that takes about 12 s,
// with the default 5 s interval, read as davix reads it: a marker at
// once, then at most 5 s between markers (1 s of slack for a loaded
// box), byte counts that never go down, the last one the whole file,
// then "success: Created".
func TestTPCMarkers(t *testing.T) {
	n := tpcNode(t, "")
	data := bytes.Repeat([]byte("0123456789abcdef"), 16<<20) // 256 MiB
	src := tpcpeer.NewSource(t, data)
	src.Rate = int64(len(data)) / 12
	start := time.Now()
	st, out, at := tpcCopy(t, n.URL+"/big", map[string]string{"Source": src.URL("/slow/big")})
	if st != 202 || !out.Success {
		t.Fatalf("COPY: %d %+v", st, out)
	}
	if len(out.Markers) < 3 || at[0].Sub(start) > time.Second {
		t.Fatalf("%d markers, the first after %v", len(out.Markers), at[0].Sub(start))
	}
	for i := 1; i < len(out.Markers); i++ {
		if gap := at[i].Sub(at[i-1]); gap > 6*time.Second {
			t.Errorf("marker %d came %v after the one before", i, gap)
		}
		if out.Markers[i].Bytes < out.Markers[i-1].Bytes {
			t.Errorf("marker %d: %d bytes after %d", i, out.Markers[i].Bytes, out.Markers[i-1].Bytes)
		}
	}
	if last := out.Markers[len(out.Markers)-1]; last.Bytes != int64(len(data)) || len(last.Connections) == 0 {
		t.Errorf("last marker %+v", last)
	}
	if mid := out.Markers[len(out.Markers)/2]; mid.Bytes == 0 || mid.Bytes == int64(len(data)) {
		t.Errorf("a marker midway says %d bytes", mid.Bytes)
	}
	t.Logf("%d markers over %v", len(out.Markers), time.Since(start).Round(time.Second))
	if st, got := getFile(t, n.URL+"/big", ""); st != 200 || !bytes.Equal(got, data) {
		t.Fatalf("GET: %d, %d bytes", st, len(got))
	}
}

// objects lists the files a node's data server holds (objects and temp
// files, not its id file).
func objects(t *testing.T, n *node) []string {
	t.Helper()
	var out []string
	filepath.Walk(filepath.Join(n.Data, "disk"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() && fi.Name() != "server-id" {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// TestTPCFailures: each failure the issue lists ends in a failure line
// (or, for Overwrite: F, a 412 before anything starts), and leaves
// nothing visible and no object behind.
func TestTPCFailures(t *testing.T) {
	n := tpcNode(t, "  marker_interval: 200ms\n")
	guarded := startShoal(t, "")
	data := bytes.Repeat([]byte("x"), 16<<20)
	src := tpcpeer.NewSource(t, data)
	putFile(t, n.URL+"/exists", "", []byte(strings.Repeat("e", 10000)))
	before := objects(t, n)
	cases := []struct{ name, source, reason string }{
		{"source 404", src.URL("/404/x"), "404"},
		{"source cut half-way", src.URL("/cut/x"), "broke off"},
		{"a source whose Digest lies", src.URL("/lie/x"), "adler32 mismatch"},
		{"destination pool without space", src.URL("/big/x"), "insufficient storage"},
	}
	for _, c := range cases {
		st, out, _ := tpcCopy(t, n.URL+"/t", map[string]string{"Source": c.source})
		if st != 202 || !out.Final || out.Success || !strings.Contains(out.Failure, c.reason) {
			t.Errorf("%s: %d %+v, want a failure naming %q", c.name, st, out, c.reason)
		}
		if st := status(t, "HEAD", n.URL+"/t", "", nil); st != 404 {
			t.Errorf("%s: HEAD %d", c.name, st)
		}
	}
	st, out, _ := tpcCopy(t, guarded.URL+"/t", map[string]string{"Source": src.URL("/f/x")})
	if st != 202 || out.Success || !strings.Contains(out.Failure, "tpc.allow_local") {
		t.Errorf("loopback guard on: %d %+v", st, out)
	}
	if st, _, _ := tpcCopy(t, n.URL+"/exists", map[string]string{"Source": src.URL("/f/x"), "Overwrite": "F"}); st != 412 {
		t.Errorf("Overwrite: F on an existing target: %d", st)
	}
	if davixCp, err := exec.LookPath("davix-cp"); err == nil {
		if out, code := run(t, t.TempDir(), nil, davixCp, "-H", "Overwrite: F", "--copy-mode", "pull", src.URL("/f/x"), n.URL+"/exists"); code == 0 {
			t.Errorf("davix-cp with Overwrite: F onto an existing file succeeded:\n%s", out)
		}
	}
	// The client hangs up mid-transfer.
	src.Rate = 4 << 20
	r := send(t, "COPY", n.URL+"/gone", "", map[string]string{"Source": src.URL("/slow/x")}, nil)
	if r.StatusCode != 307 {
		t.Fatalf("COPY: %d", r.StatusCode)
	}
	u, _ := url.Parse(r.Header.Get("Location"))
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "COPY %s HTTP/1.1\r\nHost: %s\r\nSource: %s\r\n\r\n", u.RequestURI(), u.Host, src.URL("/slow/x"))
	br := bufio.NewReader(conn)
	for markers := 0; markers < 3; {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, "End") {
			markers++
		}
	}
	conn.Close()
	cancelled := `shoal_tpc_transfers_total{direction="pull",result="cancelled"}`
	deadline := time.Now().Add(10 * time.Second)
	for metricValue(t, n, cancelled) != "1" {
		if time.Now().After(deadline) {
			t.Fatalf("the hang-up was not counted: %q", metricValue(t, n, cancelled))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if st := status(t, "HEAD", n.URL+"/gone", "", nil); st != 404 {
		t.Errorf("client gone: HEAD %d", st)
	}
	if after := objects(t, n); strings.Join(after, " ") != strings.Join(before, " ") {
		t.Errorf("objects before %v, after %v", before, after)
	}
	waitFor(t, 5*time.Second, "a cancelled transfer in the log", func() bool {
		return strings.Contains(n.stderr.String(), "result=cancelled")
	})
}

// TestTPCTLS: two `shoal all --tls`, each with its own private CA. B
// trusts A's CA for copies (tpc.ca_file): davix-cp (trusting B's CA
// only) has B pull from A and push to A over https, bytes and digests
// equal. A, which does not trust B's CA, cannot pull from B: the failure
// line says why, nothing appears.
func TestTPCTLS(t *testing.T) {
	davixCp := need(t, "davix-cp")
	a := startTLS(t, "", "SHOAL_TPC_ALLOW_LOCAL=true")
	b := startTLS(t, "", "SHOAL_TPC_ALLOW_LOCAL=true", "SHOAL_TPC_CA_FILE="+a.ca)
	dir := t.TempDir()
	_, data := randomFile(t, dir, "f", 2<<20+5)
	trustA := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: caPool(t, a.ca)}}}
	trustB := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: caPool(t, b.ca)}}}
	do := func(c *http.Client, method, u string, body []byte, hdr ...string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, u, bytes.NewReader(body))
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, u, err)
		}
		return resp
	}
	resp := do(trustA, "PUT", a.URL+"/f", data)
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Fatalf("PUT on A: %d", resp.StatusCode)
	}
	capathB := []string{"--capath", b.capath}
	if out, code := run(t, dir, noSystemCA, davixCp, append(capathB, "--copy-mode", "pull", a.URL+"/f", b.URL+"/pulled")...); code != 0 {
		t.Fatalf("B pulls from A over https: exit %d\n%s", code, out)
	}
	if out, code := run(t, dir, noSystemCA, davixCp, append(capathB, "--copy-mode", "push", b.URL+"/pulled", a.URL+"/pushed")...); code != 0 {
		t.Fatalf("B pushes to A over https: exit %d\n%s", code, out)
	}
	for _, c := range []struct {
		client *http.Client
		u      string
	}{{trustB, b.URL + "/pulled"}, {trustA, a.URL + "/pushed"}} {
		resp := do(c.client, "GET", c.u, nil)
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !bytes.Equal(got, data) {
			t.Fatalf("GET %s: %d, %d bytes", c.u, resp.StatusCode, len(got))
		}
		head := do(c.client, "HEAD", c.u, nil, "Want-Digest", "adler32,md5")
		head.Body.Close()
		// A file of 2 MiB: its adler32 alone, disk.md5 being off by default.
		if want := fmt.Sprintf("adler32=%08x", adler32.Checksum(data)); head.Header.Get("Digest") != want {
			t.Errorf("%s: Digest %q, want %q", c.u, head.Header.Get("Digest"), want)
		}
	}
	resp = do(trustA, "COPY", a.URL+"/from-b", nil, "Source", b.URL+"/pulled")
	defer resp.Body.Close()
	out, err := tpc.ReadStream(resp.Body, nil)
	if resp.StatusCode != 202 || err != nil || out.Success || !strings.Contains(out.Failure, "certificate") {
		t.Errorf("A pulling from B, whose CA it does not trust: %d %+v %v", resp.StatusCode, out, err)
	}
	if r := do(trustA, "HEAD", a.URL+"/from-b", nil); r.StatusCode != 404 {
		t.Errorf("HEAD after the refused pull: %d", r.StatusCode)
	}
}
