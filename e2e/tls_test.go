package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"shoal/tlsconf"
)

// This file tests TLS with the real binary and real clients, trusting
// only the private CA `shoal all --tls` makes (never -k): curl --cacert
// and davix --capath through redirects and md's proxy, litmus over https,
// shoal admin, certificate rotation by SIGHUP under a running upload, a
// data server the cluster CA did not sign, and TLS 1.1.

// tlsNode is a `shoal all --tls` and what it printed about its TLS.
type tlsNode struct {
	*proc
	data           string
	ca, capath, fp string
}

// startTLS runs `shoal all --tls` over data (a new temp dir when empty).
func startTLS(t *testing.T, data string, env ...string) *tlsNode {
	t.Helper()
	if data == "" {
		data = t.TempDir()
	}
	p := startProc(t, env, "all", "--data", data, "--listen", "127.0.0.1:0", "--disk-listen", "127.0.0.1:0", "--tls", "--log-level", "debug")
	n := &tlsNode{proc: p, data: data, ca: p.fields["ca"], capath: p.fields["capath"], fp: p.fields["sha256"]}
	if !strings.HasPrefix(n.URL, "https://") || !strings.HasPrefix(n.DiskURL, "https://") {
		t.Fatalf("shoal all --tls printed md %q, disk %q: want https URLs", n.URL, n.DiskURL)
	}
	if n.ca != filepath.Join(data, "tls", "ca.pem") || n.capath != filepath.Join(data, "tls", "capath") || len(n.fp) != 95 {
		t.Fatalf("shoal all --tls printed ca %q, capath %q, sha256 %q", n.ca, n.capath, n.fp)
	}
	return n
}

// noSystemCA keeps clients from trusting anything but what they are given.
var noSystemCA = []string{"CURL_CA_BUNDLE=/nonexistent", "SSL_CERT_FILE=/nonexistent", "SSL_CERT_DIR=/nonexistent", "X509_CERT_DIR=/nonexistent"}

// caPool is a pool holding the CA certificate of file.
func caPool(t *testing.T, file string) *x509.CertPool {
	t.Helper()
	pool, err := tlsconf.LoadPool(file)
	if err != nil {
		t.Fatal(err)
	}
	return pool
}

// servedFingerprint opens a new TLS connection to the https base URL,
// verified against pool, and returns the served certificate's SHA-256.
func servedFingerprint(t *testing.T, base string, pool *x509.CertPool) string {
	t.Helper()
	conn, err := tls.Dial("tcp", strings.TrimPrefix(base, "https://"), &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatalf("TLS to %s: %v", base, err)
	}
	defer conn.Close()
	return tlsconf.Fingerprint(conn.ConnectionState().PeerCertificates[0])
}

// TestTLSCurl: curl --cacert puts (-L -T, through the 307 to the https
// data server, or streamed by md to it over TLS in proxy mode) and gets
// (-L) files, bytes compared; the 302 points at the https data server; the
// fingerprint printed is the one served; curl without the CA, and any
// client offering at most TLS 1.1, are refused; a restart reuses the CA.
func TestTLSCurl(t *testing.T) {
	curl := need(t, "curl")
	for _, mode := range []string{"redirect", "proxy"} {
		t.Run(mode, func(t *testing.T) {
			// redirect: through the data server (local data off); proxy:
			// md serves its own data over TLS.
			n := startTLS(t, "", "SHOAL_MD_DATA_MODE="+mode, fmt.Sprintf("SHOAL_ALL_LOCAL_DATA=%v", mode != "redirect"))
			dir := t.TempDir()
			for _, tc := range []struct {
				name string
				size int
			}{{"small.bin", 100}, {"onemeg.bin", 1<<20 + 17}, {"empty.bin", 0}} {
				src, want := randomFile(t, dir, tc.name, tc.size)
				if out, code := run(t, dir, noSystemCA, curl, "-sS", "-L", "--fail-with-body", "--cacert", n.ca, "-T", src, n.URL+"/"+tc.name); code != 0 {
					t.Fatalf("curl --cacert -L -T %s: exit %d: %s", tc.name, code, out)
				}
				got := filepath.Join(dir, tc.name+".got")
				if out, code := run(t, dir, noSystemCA, curl, "-sS", "-L", "--fail-with-body", "--cacert", n.ca, "-o", got, n.URL+"/"+tc.name); code != 0 {
					t.Fatalf("curl --cacert -L GET %s: exit %d: %s", tc.name, code, out)
				}
				checkFile(t, got, want)
			}
			if mode == "redirect" {
				out, code := run(t, dir, noSystemCA, curl, "-sS", "--cacert", n.ca, "-o", "/dev/null", "-w", "%{http_code} %{redirect_url}", n.URL+"/onemeg.bin")
				if status, loc, _ := strings.Cut(out, " "); code != 0 || status != "302" || !strings.HasPrefix(loc, n.DiskURL+"/") {
					t.Errorf("GET without -L: exit %d, %q; want 302 to %s/…", code, out, n.DiskURL)
				}
			}
			if out, code := run(t, dir, nil, curl, "-sS", "-o", "/dev/null", n.URL+"/small.bin"); code != 60 {
				t.Errorf("curl without the CA: exit %d (want 60, certificate problem): %s", code, out)
			}
			pool := caPool(t, n.ca)
			for _, base := range []string{n.URL, n.DiskURL} {
				if fp := servedFingerprint(t, base, pool); fp != n.fp {
					t.Errorf("%s serves %s, shoal all printed %s", base, fp, n.fp)
				}
				conn, err := tls.Dial("tcp", strings.TrimPrefix(base, "https://"), &tls.Config{RootCAs: pool, MaxVersion: tls.VersionTLS11})
				if err == nil {
					conn.Close()
					t.Errorf("%s accepted a TLS 1.1 handshake", base)
				} else if !strings.Contains(err.Error(), "version") {
					t.Errorf("%s: TLS 1.1 refused, but not for its version: %v", base, err)
				}
			}
			if mode != "redirect" {
				return
			}
			// shoal admin reaches md and probes the data server over
			// https, trusting the CA it is given.
			out, code := run(t, dir, nil, shoalBin, "admin", "status", "--json", "--md", n.URL, "--ca-file", n.ca, "--secret-file", filepath.Join(n.data, "secret"))
			if code != 0 || !strings.Contains(out, `"md_health": "ok"`) || !strings.Contains(out, `"health": "ok"`) {
				t.Errorf("shoal admin status --ca-file: exit %d:\n%s", code, out)
			}
			// fsck, a job md's runner runs, lists the data server's objects
			// over https with the cluster CA.
			if out, code := run(t, dir, nil, shoalBin, "admin", "fsck", "--md", n.URL, "--ca-file", n.ca, "--secret-file", filepath.Join(n.data, "secret")); code != 0 {
				t.Errorf("shoal admin fsck over https: exit %d:\n%s", code, out)
			}
			// A restart reuses the CA and the server certificate.
			caPEM, _ := os.ReadFile(n.ca)
			if code := n.stop(t); code != 0 {
				t.Fatalf("shoal all exit %d", code)
			}
			again := startTLS(t, n.data)
			if b, _ := os.ReadFile(again.ca); string(b) != string(caPEM) || again.fp != n.fp {
				t.Errorf("restart made a new CA or certificate (sha256 %s, was %s)", again.fp, n.fp)
			}
			got := filepath.Join(dir, "after-restart.got")
			if out, code := run(t, dir, noSystemCA, curl, "-sS", "-L", "--fail-with-body", "--cacert", again.ca, "-o", got, again.URL+"/small.bin"); code != 0 {
				t.Fatalf("GET after restart: exit %d: %s", code, out)
			}
		})
	}
}

// TestTLSDavix: davix-mkdir, davix-put, davix-get and davix-ls with
// --capath DATA/tls/capath (OpenSSL's hashed directory), bytes compared.
func TestTLSDavix(t *testing.T) {
	put, get, ls, mkdir := need(t, "davix-put"), need(t, "davix-get"), need(t, "davix-ls"), need(t, "davix-mkdir")
	n := startTLS(t, "")
	dir := t.TempDir()
	capath := []string{"--capath", n.capath}
	if out, code := run(t, dir, noSystemCA, mkdir, append(capath, n.URL+"/grid/")...); code != 0 {
		t.Fatalf("davix-mkdir: exit %d: %s", code, out)
	}
	files := map[string][]byte{}
	for name, size := range map[string]int{"a.dat": 1000, "b.dat": 3<<20 + 17} {
		src, data := randomFile(t, dir, name, size)
		files[name] = data
		if out, code := run(t, dir, noSystemCA, put, append(capath, src, n.URL+"/grid/"+name)...); code != 0 {
			t.Fatalf("davix-put %s: exit %d: %s", name, code, out)
		}
	}
	for name, want := range files {
		got := filepath.Join(dir, name+".got")
		if out, code := run(t, dir, noSystemCA, get, append(capath, n.URL+"/grid/"+name, got)...); code != 0 {
			t.Fatalf("davix-get %s: exit %d: %s", name, code, out)
		}
		checkFile(t, got, want)
	}
	out, code := run(t, dir, noSystemCA, ls, append(capath, n.URL+"/grid/")...)
	if code != 0 || !strings.Contains(out, "a.dat") || !strings.Contains(out, "b.dat") {
		t.Errorf("davix-ls: exit %d:\n%s", code, out)
	}
	// Without the CA, davix refuses the server.
	if out, code := run(t, dir, noSystemCA, get, n.URL+"/grid/a.dat", filepath.Join(dir, "nocapath")); code == 0 {
		t.Errorf("davix-get without --capath succeeded: %s", out)
	}
}

// TestTLSLitmus runs litmus's suites against shoal all over https. litmus
// (neon) cannot be given a CA and its certificate callback accepts any
// certificate, so this proves WebDAV over TLS, not verification, which
// curl and davix prove above.
func TestTLSLitmus(t *testing.T) {
	litmus := need(t, "litmus")
	curl := need(t, "curl")
	n := startTLS(t, "")
	if out, code := run(t, t.TempDir(), noSystemCA, curl, "-sS", "--cacert", n.ca, "-o", "/dev/null", "-w", "%{http_code}", "-X", "MKCOL", n.URL+"/litmus/"); code != 0 || out != "201" {
		t.Fatalf("MKCOL /litmus/: curl exit %d, status %q", code, out)
	}
	suites := []string{"basic", "copymove", "props", "locks", "http"}
	out, code := run(t, t.TempDir(), []string{"TESTS=" + strings.Join(suites, " ")}, litmus, "--keep-going", n.URL+"/litmus/")
	t.Logf("litmus output:\n%s", out)
	checkLitmus(t, out, code, suites)
}

// checkLitmus fails unless every suite ran to its summary without a failure.
func checkLitmus(t *testing.T, out string, code int, suites []string) {
	t.Helper()
	ran := map[string]bool{}
	for _, m := range litmusSummary.FindAllStringSubmatch(out, -1) {
		ran[m[1]] = true
		if m[4] != "0" {
			t.Errorf("litmus %s: %s of %s tests failed", m[1], m[4], m[2])
		}
	}
	for _, s := range suites {
		if !ran[s] {
			t.Errorf("litmus suite %s did not run to its summary", s)
		}
	}
	for _, m := range litmusFail.FindAllStringSubmatch(out, -1) {
		t.Errorf("litmus FAIL: %s", strings.TrimSpace(m[0]))
	}
	if code != 0 {
		t.Errorf("litmus exit code %d", code)
	}
}

// TestTLSRotation replaces DATA/tls/server.pem and server.key while a
// rate-limited upload runs straight to the data server, then sends SIGHUP
// (file polling off, so the signal does it): new connections to md and to
// the data server get the new certificate, and the upload completes whole
// on its connection.
func TestTLSRotation(t *testing.T) {
	curl := need(t, "curl")
	n := startTLS(t, "", "SHOAL_MD_DATA_MODE=redirect", "SHOAL_TLS_WATCH=0")
	dir := t.TempDir()
	src, want := randomFile(t, dir, "slow.bin", 2<<20)
	type result struct {
		out  string
		code int
	}
	done := make(chan result, 1)
	uploadedAfterRotation := false
	go func() {
		out, code := run(t, dir, noSystemCA, curl, "-sS", "-L", "--fail-with-body", "--cacert", n.ca, "--limit-rate", "512k",
			"-H", "Expect: 100-continue", "-T", src, "-w", "%{http_code}", n.URL+"/slow.bin")
		done <- result{out, code}
	}()
	// The upload is under way: the data server has some of its bytes.
	waitFor(t, 20*time.Second, "the upload to reach the data server", func() bool {
		return uploading(n.cmd.Process.Pid, filepath.Join(n.data, "disk"))
	})

	ca, err := tlsconf.LoadCA(n.ca, filepath.Join(n.data, "tls", "ca.key"))
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := ca.Issue([]string{"127.0.0.1", "localhost"}, 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"server.key": keyPEM, "server.pem": certPEM} {
		tmp := filepath.Join(n.data, "tls", "."+name+".new")
		if err := os.WriteFile(tmp, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(n.data, "tls", name)); err != nil {
			t.Fatal(err)
		}
	}
	pool := caPool(t, n.ca)
	if fp := servedFingerprint(t, n.URL, pool); fp != n.fp {
		t.Fatalf("certificate changed before SIGHUP with tls.watch 0")
	}
	if l := n.stderr.String(); !strings.Contains(l, `msg="tls certificate in use" role=md`) || !strings.Contains(l, "sha256="+n.fp) {
		t.Errorf("the log does not name the certificate in use at start:\n%s", l)
	}
	n.signal(syscall.SIGHUP)
	defer func() {
		// The rotation happened mid-upload, not after it.
		if !uploadedAfterRotation {
			t.Errorf("the upload had finished before the new certificate was served")
		}
	}()
	var fresh string
	waitFor(t, 10*time.Second, "the new certificate on new connections", func() bool {
		fresh = servedFingerprint(t, n.URL, pool)
		return fresh != n.fp
	})
	if disk := servedFingerprint(t, n.DiskURL, pool); disk != fresh {
		t.Errorf("data server serves %s after SIGHUP, md %s", disk, fresh)
	}
	select {
	case r := <-done:
		done <- r
	default:
		uploadedAfterRotation = true
	}
	select {
	case r := <-done:
		if r.code != 0 || !strings.HasSuffix(r.out, "201") {
			t.Fatalf("upload across the rotation: exit %d: %s", r.code, r.out)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("upload did not finish")
	}
	select {
	case <-n.exited:
		t.Fatalf("shoal all exited on SIGHUP: %v", n.exitErr)
	default:
	}
	got := filepath.Join(dir, "slow.got")
	if out, code := run(t, dir, noSystemCA, curl, "-sS", "-L", "--fail-with-body", "--cacert", n.ca, "-o", got, n.URL+"/slow.bin"); code != 0 {
		t.Fatalf("GET after rotation: exit %d: %s", code, out)
	}
	checkFile(t, got, want)
	waitFor(t, 5*time.Second, "the log to name the new certificate "+fresh, func() bool {
		return strings.Contains(n.stderr.String(), "sha256="+fresh)
	})
}

// TestTLSUntrustedDataServer starts data servers next to a shoal all
// --tls, each with the cluster secret: one with a certificate of the
// cluster CA becomes live; one with a certificate of another CA and one
// serving plain http are refused by md (their heartbeats get 403 with the
// reason, md never lists them); one that does not trust md's CA refuses
// md itself.
func TestTLSUntrustedDataServer(t *testing.T) {
	n := startTLS(t, "")
	secret := filepath.Join(n.data, "secret")
	clusterCA, err := tlsconf.LoadCA(n.ca, filepath.Join(n.data, "tls", "ca.key"))
	if err != nil {
		t.Fatal(err)
	}
	otherCA, err := tlsconf.NewCA("not the cluster CA")
	if err != nil {
		t.Fatal(err)
	}
	pair := func(ca *tlsconf.CA) []string {
		certPEM, keyPEM, err := ca.Issue([]string{"127.0.0.1"}, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		d := t.TempDir()
		cert, key := filepath.Join(d, "c.pem"), filepath.Join(d, "c.key")
		os.WriteFile(cert, certPEM, 0o600)
		os.WriteFile(key, keyPEM, 0o600)
		return []string{"--tls-cert", cert, "--tls-key", key}
	}
	disk := func(id string, extra ...string) *proc {
		args := append([]string{"disk", "--listen", "127.0.0.1:0", "--md", n.URL, "--data", t.TempDir(), "--secret-file", secret, "--id", id}, extra...)
		return startProc(t, []string{"SHOAL_DISK_HEARTBEAT=200ms"}, args...)
	}
	good := disk("good", append(pair(clusterCA), "--ca-file", n.ca)...)
	other := disk("other-ca", append(pair(otherCA), "--ca-file", n.ca)...)
	plain := disk("plain", "--ca-file", n.ca)
	distrust := disk("distrust", pair(clusterCA)...) // system roots only
	if !strings.HasPrefix(good.DiskURL, "https://") || !strings.HasPrefix(plain.DiskURL, "http://") {
		t.Fatalf("data server URLs: %s, %s", good.DiskURL, plain.DiskURL)
	}

	listed := func() map[string]bool {
		ids, err := serverIDs(t, n.URL, secret, "--ca-file", n.ca)
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	waitFor(t, 20*time.Second, "the data server with a cluster certificate to be listed", func() bool { return listed()["good"] })
	for _, tc := range []struct {
		p    *proc
		says string
	}{
		{other, "cannot verify"},
		{plain, "must serve https"},
		{distrust, "certificate"},
	} {
		waitFor(t, 20*time.Second, tc.p.fields["id"]+"'s heartbeat refused", func() bool {
			return strings.Contains(tc.p.stderr.String(), tc.says)
		})
	}
	for id := range listed() {
		if id == "other-ca" || id == "plain" || id == "distrust" {
			t.Errorf("md lists data server %s", id)
		}
	}
	// md's own log says whose heartbeats it refuses, once a minute, not
	// at each of them (every 200 ms here).
	for _, id := range []string{"other-ca", "plain"} {
		line := `msg="heartbeat refused: the server does not become live" server=` + id + " "
		if c := strings.Count(n.stderr.String(), line); c != 1 {
			t.Errorf("md logged the refusal of %s's heartbeats %d times, want once:\n%s", id, c, n.stderr)
		}
	}
}

// TestTLSOwnCertificates: shoal all with certificates given in the config,
// as from a site CA or a public one: md's names only a DNS name (as a
// public certificate would), the data server's its address. Its data
// server still reaches md's internal port on 127.0.0.1 (verifying md's
// certificate for the name it holds), and curl reaches md by that name.
func TestTLSOwnCertificates(t *testing.T) {
	curl := need(t, "curl")
	dir := t.TempDir()
	ca, err := tlsconf.NewCA("site CA")
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mdCert, mdKey, err := ca.Issue([]string{"storage.test"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	diskCert, diskKey, err := ca.Issue([]string{"127.0.0.1"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	caFile := write("ca.pem", ca.CertPEM)
	cfg := write("shoal.yaml", []byte("tls:\n"+
		"  ca_file: "+caFile+"\n"+
		"  md_cert_file: "+write("md.pem", mdCert)+"\n  md_key_file: "+write("md.key", mdKey)+"\n"+
		"  disk_cert_file: "+write("disk.pem", diskCert)+"\n  disk_key_file: "+write("disk.key", diskKey)+"\n"))
	data := t.TempDir()
	p := startProc(t, []string{"SHOAL_MD_DATA_MODE=redirect"}, "all", "--config", cfg, "--data", data, "--listen", "127.0.0.1:0", "--disk-listen", "127.0.0.1:0")
	if p.fields["ca"] != caFile || p.fields["capath"] != "" || p.fields["sha256"] == "" {
		t.Errorf("printed ca %q capath %q sha256 %q", p.fields["ca"], p.fields["capath"], p.fields["sha256"])
	}
	if _, err := os.Stat(filepath.Join(data, "tls")); err == nil {
		t.Errorf("a private CA was made although certificates were given")
	}
	port := p.URL[strings.LastIndex(p.URL, ":")+1:]
	byName := "https://storage.test:" + port
	resolve := []string{"--resolve", "storage.test:" + port + ":127.0.0.1", "--cacert", caFile}
	src, want := randomFile(t, dir, "own.bin", 200<<10)
	if out, code := run(t, dir, noSystemCA, curl, append(resolve, "-sS", "-L", "--fail-with-body", "-T", src, byName+"/own.bin")...); code != 0 {
		t.Fatalf("curl -L -T by name: exit %d: %s", code, out)
	}
	got := filepath.Join(dir, "own.got")
	if out, code := run(t, dir, noSystemCA, curl, append(resolve, "-sS", "-L", "--fail-with-body", "-o", got, byName+"/own.bin")...); code != 0 {
		t.Fatalf("curl -L GET by name: exit %d: %s", code, out)
	}
	checkFile(t, got, want)
	if out, code := run(t, dir, noSystemCA, curl, "-sS", "--cacert", caFile, "-o", "/dev/null", p.URL+"/own.bin"); code != 60 {
		t.Errorf("curl by address, which md's certificate does not name: exit %d, want 60: %s", code, out)
	}
}

// TestTLSSeparateProcesses: shoal md, shoal disk and shoal gw, each with
// its own certificate of a site CA and --ca-file: the data server and the
// gw register over https (md verifying both), and curl puts and gets
// through md's redirect to the data server.
func TestTLSSeparateProcesses(t *testing.T) {
	curl := need(t, "curl")
	dir := t.TempDir()
	ca, err := tlsconf.NewCA("site CA")
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, ca.CertPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	pair := func(role string) []string {
		certPEM, keyPEM, err := ca.Issue([]string{"127.0.0.1"}, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		cert, key := filepath.Join(dir, role+".pem"), filepath.Join(dir, role+".key")
		os.WriteFile(cert, certPEM, 0o644)
		os.WriteFile(key, keyPEM, 0o600)
		return []string{"--tls-cert", cert, "--tls-key", key, "--ca-file", caFile}
	}
	secret := writeSecret(t, "k0 0123456789abcdef0123456789abcdef")
	m := startMD(t, "sqlite:"+filepath.Join(dir, "catalog.db"), "", secret, []string{"SHOAL_MD_DATA_MODE=redirect"}, pair("md")...)
	if !strings.HasPrefix(m.URL, "https://") || m.fields["sha256"] == "" {
		t.Fatalf("shoal md with a certificate printed md %q, sha256 %q", m.URL, m.fields["sha256"])
	}
	hb := []string{"SHOAL_DISK_HEARTBEAT=200ms", "SHOAL_GW_HEARTBEAT=200ms"}
	d := startProc(t, hb, append([]string{"disk", "--listen", "127.0.0.1:0", "--md", m.URL, "--data", t.TempDir(), "--secret-file", secret, "--id", "d1"}, pair("disk")...)...)
	g := startProc(t, hb, append([]string{"gw", "--listen", "127.0.0.1:0", "--md", m.URL, "--secret-file", secret, "--id", "g1"}, pair("gw")...)...)
	if !strings.HasPrefix(d.DiskURL, "https://") || !strings.HasPrefix(g.fields["gw"], "https://") {
		t.Fatalf("disk %q, gw %q: want https URLs", d.DiskURL, g.fields["gw"])
	}
	waitFor(t, 20*time.Second, "md to list the data server and the gw", func() bool {
		out, code := run(t, dir, nil, shoalBin, "admin", "servers", "--json", "--md", m.URL, "--ca-file", caFile, "--secret-file", secret)
		return code == 0 && strings.Contains(out, `"d1"`) && strings.Contains(out, `"g1"`) && strings.Contains(out, g.fields["gw"])
	})
	src, want := randomFile(t, dir, "sep.bin", 300<<10)
	if out, code := run(t, dir, noSystemCA, curl, "-sS", "-L", "--fail-with-body", "--cacert", caFile, "-T", src, m.URL+"/sep.bin"); code != 0 {
		t.Fatalf("curl -L -T: exit %d: %s", code, out)
	}
	got := filepath.Join(dir, "sep.got")
	if out, code := run(t, dir, noSystemCA, curl, "-sS", "-L", "--fail-with-body", "--cacert", caFile, "-o", got, m.URL+"/sep.bin"); code != 0 {
		t.Fatalf("curl -L GET: exit %d: %s", code, out)
	}
	checkFile(t, got, want)
}

// uploading reports whether the shoal process pid has a temporary upload
// file under the data server directory dir with some bytes in it: a
// named one in dir's tmp/, or an unnamed one (O_TMPFILE) it holds open.
func uploading(pid int, dir string) bool {
	for _, size := range tempUploads(pid, dir) {
		if size > 0 {
			return true
		}
	}
	return false
}

// TestAllExitsWhenNotRegistered: a shoal all whose data server md never
// takes (here an http URL in a TLS cluster) ends with exit 1 and the
// reason after fifteen heartbeats, instead of running on, never ready.
func TestAllExitsWhenNotRegistered(t *testing.T) {
	data := t.TempDir()
	out, code := run(t, data, []string{"SHOAL_DISK_HEARTBEAT=100ms", "SHOAL_DISK_PUBLIC_URL=http://127.0.0.1:9/"},
		shoalBin, "all", "--data", data, "--listen", "127.0.0.1:0", "--tls")
	if code != 1 || !strings.Contains(out, "did not register with md within 1.5s") || !strings.Contains(out, "md runs TLS and refuses http://127.0.0.1:9/") || strings.Contains(out, "\nready\n") {
		t.Errorf("shoal all with a data server md refuses: exit %d\n%s", code, out)
	}
}
