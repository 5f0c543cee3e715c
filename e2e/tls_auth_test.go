package e2e

import (
	"encoding/base64"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"shoal/internal/testissuer"
)

// TestTLSAuth: the real clients over https, trusting only the
// private CA of `shoal all --tls`, with credentials: curl --cacert with a
// bearer token (-L PUT and GET through the redirects: curl drops the
// header there, the signed URL alone carries the request), davix --capath
// with -H 'Authorization: Bearer …' and with --userlogin/--userpass, curl
// with Basic, litmus URL USER PASS (every suite passes); anonymous and a
// wrong password are refused.
func TestTLSAuth(t *testing.T) {
	curl := need(t, "curl")
	litmus := need(t, "litmus")
	put, get, ls := need(t, "davix-put"), need(t, "davix-get"), need(t, "davix-ls")
	dir := t.TempDir()
	is := testissuer.New(t)
	jwks := filepath.Join(dir, "issuer.jwks")
	if err := os.WriteFile(jwks, is.JWKS(), 0o600); err != nil {
		t.Fatal(err)
	}
	const aud = "https://shoal.e2e.example"
	usersFile := filepath.Join(dir, "users")
	const alicePW = "alice TLS pass phrase"
	addUser(t, usersFile, "alice", alicePW)
	cfg := filepath.Join(dir, "shoal.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`auth:
  issuers:
    - {url: %q, jwks_file: %q}
  audiences: [%q]
  users_file: %q
  rules:
    - {path: /home/alice, who: "user:alice", rights: [read, create, modify]}
    - {path: /, who: authenticated, rights: [read]}
`, is.URL, jwks, aud, usersFile)), 0o600)
	// A non-loopback address when this host has one: Basic is then
	// accepted only because the connection is TLS (from loopback md would
	// take it in clear too).
	host := nonLoopbackIPv4()
	if host == "" {
		host = "127.0.0.1"
		t.Logf("no non-loopback IPv4 address here: testing on loopback")
	}
	p := startProc(t, nil, "all", "--config", cfg, "--data", t.TempDir(), "--listen", host+":0", "--disk-listen", host+":0", "--tls")
	t.Logf("md %s, data server %s", p.URL, p.DiskURL)
	ca, capath := p.fields["ca"], p.fields["capath"]
	if !strings.HasPrefix(p.URL, "https://") || ca == "" || capath == "" {
		t.Fatalf("shoal all --tls printed md %q, ca %q, capath %q", p.URL, ca, capath)
	}
	admin := "Authorization: Bearer " + is.Mint(t, is.WLCG("tls-robot", aud, "storage.read:/ storage.modify:/"))
	reader := "Authorization: Bearer " + is.Mint(t, is.WLCG("tls-reader", aud, "storage.read:/data"))
	curlTLS := func(args ...string) (string, int) {
		return run(t, dir, noSystemCA, curl, append([]string{"-sS", "--cacert", ca}, args...)...)
	}
	for _, d := range []string{"/data/", "/home/", "/home/alice/"} {
		if out, _ := curlTLS("-o", "/dev/null", "-w", "%{http_code}", "-X", "MKCOL", "-H", admin, p.URL+d); out != "201" {
			t.Fatalf("MKCOL %s with the admin token: %s", d, out)
		}
	}
	if out, _ := curlTLS("-o", "/dev/null", "-w", "%{http_code}", "-X", "MKCOL", p.URL+"/anon/"); out != "401" {
		t.Errorf("anonymous MKCOL over https: %s, want 401", out)
	}

	// curl -L with a token, through the 307 and the 302 to the https
	// data server.
	src, want := randomFile(t, dir, "tok.bin", 1<<20+5)
	if out, code := curlTLS("-L", "--fail-with-body", "-H", admin, "-T", src, p.URL+"/data/tok.bin"); code != 0 {
		t.Fatalf("curl -L -T with a token: exit %d: %s", code, out)
	}
	got := filepath.Join(dir, "tok.got")
	if out, code := curlTLS("-L", "--fail-with-body", "-H", reader, "-o", got, p.URL+"/data/tok.bin"); code != 0 {
		t.Fatalf("curl -L GET with a read token: exit %d: %s", code, out)
	}
	checkFile(t, got, want)

	// davix with a token.
	capathArg := []string{"--capath", capath}
	if out, code := run(t, dir, noSystemCA, put, append(capathArg, "-H", admin, src, p.URL+"/data/davix.bin")...); code != 0 {
		t.Fatalf("davix-put with a token: exit %d: %s", code, out)
	}
	if out, code := run(t, dir, noSystemCA, get, append(capathArg, "-H", reader, p.URL+"/data/davix.bin", got+".davix")...); code != 0 {
		t.Fatalf("davix-get with a token: exit %d: %s", code, out)
	}
	checkFile(t, got+".davix", want)
	if out, code := run(t, dir, noSystemCA, ls, append(capathArg, "-H", reader, p.URL+"/data/")...); code != 0 || !strings.Contains(out, "davix.bin") {
		t.Errorf("davix-ls with a token: exit %d: %s", code, out)
	}

	// Basic over TLS: davix with the header (davix 0.8 never answers a
	// 401 with --userlogin/--userpass: see README, Security model), curl -u.
	userArgs := append(capathArg, "-H", "Authorization: Basic "+base64.StdEncoding.EncodeToString([]byte("alice:"+alicePW)))
	if out, code := run(t, dir, noSystemCA, put, append(userArgs, src, p.URL+"/home/alice/basic.bin")...); code != 0 {
		t.Fatalf("davix-put as alice: exit %d: %s", code, out)
	}
	if out, code := run(t, dir, noSystemCA, get, append(userArgs, p.URL+"/home/alice/basic.bin", got+".basic")...); code != 0 {
		t.Fatalf("davix-get as alice: exit %d: %s", code, out)
	}
	checkFile(t, got+".basic", want)
	if out, code := curlTLS("-L", "--fail-with-body", "-u", "alice:"+alicePW, "-T", src, p.URL+"/home/alice/curl.bin"); code != 0 {
		t.Errorf("curl -L -u alice PUT: exit %d: %s", code, out)
	}
	if out, _ := curlTLS("-o", "/dev/null", "-w", "%{http_code}", "-u", "alice:wrong-password", p.URL+"/home/alice/basic.bin"); out != "401" {
		t.Errorf("wrong password over https: %s, want 401", out)
	}

	// litmus as alice over https (litmus does not verify certificates:
	// see TestTLSLitmus).
	if out, _ := curlTLS("-o", "/dev/null", "-w", "%{http_code}", "-u", "alice:"+alicePW, "-X", "MKCOL", p.URL+"/home/alice/litmus/"); out != "201" {
		t.Fatalf("MKCOL litmus as alice: %s", out)
	}
	suites := []string{"basic", "copymove", "props", "locks", "http"}
	out, code := run(t, dir, []string{"TESTS=" + strings.Join(suites, " ")}, litmus, "--keep-going", p.URL+"/home/alice/litmus/", "alice", alicePW)
	t.Logf("litmus output:\n%s", out)
	checkLitmus(t, out, code, suites)
}

// nonLoopbackIPv4 is an IPv4 address of this host that is not loopback,
// or "".
func nonLoopbackIPv4() string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return ""
	}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil && !ipn.IP.IsLoopback() && !ipn.IP.IsLinkLocalUnicast() {
			return ipn.IP.String()
		}
	}
	return ""
}
