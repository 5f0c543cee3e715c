package md

import (
	"bytes"
	"crypto/tls"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"shoal/tlsconf"
)

// Real clients against md with identity (plain http on loopback, where
// md accepts Basic; the same over https is in the TLS tests).

// needTools skips (fails in CI) unless every tool is installed.
func needTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is not installed", tool)
			}
			t.Skipf("%s is not installed", tool)
		}
	}
}

func runTool(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestCurlBearer: curl -L with a bearer token PUTs and GETs through md's
// redirects. curl drops Authorization when it follows a redirect to
// another host or port, so the signed URL alone must carry the request;
// without the token md refuses.
func TestCurlBearer(t *testing.T) {
	needTools(t, "curl")
	f := newAuthFixture(t, DataRedirect)
	f.as(root, "MKCOL", "/t", nil, nil).want(t, "MKCOL", 201, "")
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	data := bytes.Repeat([]byte("curl with a token\n"), 50000) // ~900 KB: redirected
	if err := os.WriteFile(src, data, 0o600); err != nil {
		t.Fatal(err)
	}
	auth := "Authorization: " + f.bearer("storage.read:/t storage.create:/t")
	code := runTool(t, "curl", "-sS", "-L", "-o", "/dev/null", "-w", "%{http_code}", "-T", src, "-H", auth, f.url+"/t/c.bin")
	if code != "201" {
		t.Fatalf("curl -L PUT: %s", code)
	}
	dst := filepath.Join(dir, "dst")
	code = runTool(t, "curl", "-sS", "-L", "-o", dst, "-w", "%{http_code} %{num_redirects}", "-H", auth, f.url+"/t/c.bin")
	if got, _ := os.ReadFile(dst); code != "200 1" || !bytes.Equal(got, data) {
		t.Fatalf("curl -L GET: %s, %d bytes", code, len(got))
	}
	if code := runTool(t, "curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", f.url+"/t/c.bin"); code != "401" {
		t.Fatalf("curl GET without the token: %s", code)
	}
	if code := runTool(t, "curl", "-sS", "-L", "-o", "/dev/null", "-w", "%{http_code}", "-T", src, "-H", auth, f.url+"/t/c.bin"); code != "403" {
		t.Fatalf("curl -L PUT over a file with a create token: %s", code)
	}
}

// TestDavixAuth: davix-put, -get and -ls with a bearer token and with a
// local user's Basic credentials (-H), over http and https.
func TestDavixAuth(t *testing.T) {
	needTools(t, "davix-put", "davix-get", "davix-ls")
	f := newAuthFixture(t, DataRedirect)
	f.as(root, "MKCOL", "/t", nil, nil).want(t, "MKCOL", 201, "")
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	data := bytes.Repeat([]byte("davix!"), 60000)
	if err := os.WriteFile(src, data, 0o600); err != nil {
		t.Fatal(err)
	}
	// md also serves https, with a private CA davix trusts through
	// --capath. davix 0.8 (Debian 12 has 0.8.4) never answers a 401 with
	// --userlogin/--userpass (cern-fts/davix#81, open): a local user's
	// credentials go in the header, as for a token.
	httpsURL, capath := f.serveTLS(t)
	bearer := []string{"-H", "Authorization: " + f.bearer("storage.read:/t storage.modify:/t")}
	basic := []string{"-H", "Authorization: " + basicAuth("alice", alicePassword)}
	for _, c := range []struct {
		name, url string
		cred      []string
	}{
		{"bearer", f.url, bearer},
		{"bearer-https", httpsURL, append([]string{"--capath", capath}, bearer...)},
		{"basic", f.url, basic},
		{"basic-https", httpsURL, append([]string{"--capath", capath}, basic...)},
	} {
		t.Run(c.name, func(t *testing.T) {
			u := c.url + "/t/" + c.name
			runTool(t, append(append([]string{"davix-put"}, c.cred...), src, u)...)
			dst := filepath.Join(dir, c.name)
			runTool(t, append(append([]string{"davix-get"}, c.cred...), u, dst)...)
			if got, _ := os.ReadFile(dst); !bytes.Equal(got, data) {
				t.Errorf("davix round trip: %d bytes back of %d", len(got), len(data))
			}
			if ls := runTool(t, append(append([]string{"davix-ls"}, c.cred...), c.url+"/t/")...); !strings.Contains(ls, c.name) {
				t.Errorf("davix-ls:\n%s", ls)
			}
		})
	}
	// Without credentials davix gets nothing.
	if out, err := exec.Command("davix-ls", f.url+"/t/").CombinedOutput(); err == nil {
		t.Errorf("davix-ls without credentials succeeded:\n%s", out)
	}
}

// TestLitmusBasic runs litmus as a local user (HTTP Basic): every group
// passes as it does anonymously against an open md.
func TestLitmusBasic(t *testing.T) {
	needTools(t, "litmus")
	f := newAuthFixture(t, DataProxy)
	f.as(root, "MKCOL", "/t", nil, nil).want(t, "MKCOL", 201, "")
	f.as(root, "MKCOL", "/t/litmus", nil, nil).want(t, "MKCOL", 201, "")
	cmd := exec.Command("litmus", f.url+"/t/litmus/", "alice", alicePassword)
	cmd.Env = append(os.Environ(), "TESTS=basic copymove props locks http", "HTDOCS=/usr/share/litmus/htdocs")
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	t.Logf("litmus:\n%s", out)
	if err != nil {
		t.Fatalf("litmus failed: %v", err)
	}
	if strings.Contains(string(out), "FAIL") {
		t.Fatal("litmus reports failures")
	}
	if !strings.Contains(f.logs.String(), `"principal":"user:alice"`) {
		t.Error("md did not log litmus as alice")
	}
}

// serveTLS serves md on a second, https listener with a certificate from
// a private CA, and returns its URL and the CA's hashed directory.
func (f *authFixture) serveTLS(t *testing.T) (string, string) {
	t.Helper()
	pc, err := tlsconf.EnsurePrivateCA(filepath.Join(t.TempDir(), "tls"), []string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tlsconf.LoadServerCert(pc.CertFile, pc.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := f.md.NewHTTPServer()
	go srv.Serve(tls.NewListener(ln, cert.TLSConfig()))
	t.Cleanup(func() { srv.Shutdown() })
	return "https://" + ln.Addr().String(), pc.CAPath
}
