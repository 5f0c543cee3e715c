package e2e

import (
	"encoding/base64"
	"fmt"
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
)

// freeAddr is HOST:PORT with a port free a moment ago.
func freeAddr(t *testing.T, host string) string {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return net.JoinHostPort(host, port)
}

// refuses runs shoal with args and wants it to exit 1 at once, its error
// naming every key in keys.
func refuses(t *testing.T, env []string, keys []string, args ...string) {
	t.Helper()
	out, code := run(t, t.TempDir(), env, shoalBin, args...)
	if code != 1 {
		t.Fatalf("shoal %s: exit %d, want 1\n%s", strings.Join(args, " "), code, out)
	}
	for _, k := range keys {
		if !strings.Contains(out, k) {
			t.Errorf("shoal %s: the error does not name %s:\n%s", strings.Join(args, " "), k, out)
		}
	}
}

// TestSecureByDefault: md on a non-loopback address with no
// authentication refuses to start, naming the keys to set; on loopback
// it starts and serves anyone (make run); rules granting anonymous
// rights explicitly let it start anywhere.
func TestSecureByDefault(t *testing.T) {
	keys := []string{"auth.issuers", "auth.users_file", "auth.rules"}
	refuses(t, nil, keys, "all", "--data", t.TempDir(), "--listen", freeAddr(t, "0.0.0.0"))
	refuses(t, nil, keys, "md", "--listen", freeAddr(t, "0.0.0.0"), "--catalog", "sqlite:"+filepath.Join(t.TempDir(), "c.db"))

	n := startShoal(t, "")
	if st := status(t, "MKCOL", n.URL+"/open", "", nil); st != 201 {
		t.Fatalf("anonymous MKCOL on loopback with nothing configured: %d", st)
	}

	cfg := filepath.Join(t.TempDir(), "shoal.yaml")
	os.WriteFile(cfg, []byte("auth:\n  rules:\n    - {path: /, who: anonymous, rights: [read]}\n"), 0o600)
	cmd := exec.Command(shoalBin, "all", "--config", cfg, "--data", t.TempDir(), "--listen", freeAddr(t, "0.0.0.0"), "--disk-listen", "127.0.0.1:0")
	pub := runNode(t, cmd, "", "shoal all on 0.0.0.0", 60*time.Second)
	if st := status(t, "PROPFIND", pub.URL+"/", "", map[string]string{"Depth": "1"}); st != 207 {
		t.Errorf("anonymous listing with a read rule: %d", st)
	}
	if st := status(t, "MKCOL", pub.URL+"/x", "", nil); st != 401 {
		t.Errorf("anonymous MKCOL with a read rule: %d", st)
	}
}

var noRedirect = &http.Client{Timeout: time.Minute, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// send makes one request (no redirect followed) with the credential cred
// (an Authorization value, or "").
func send(t *testing.T, method, u, cred string, hdr map[string]string, body io.Reader) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	if cred != "" {
		req.Header.Set("Authorization", cred)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

func status(t *testing.T, method, u, cred string, hdr map[string]string) int {
	t.Helper()
	return send(t, method, u, cred, hdr, nil).StatusCode
}

func basicCred(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

// addUser runs `shoal admin user add` as an operator would.
func addUser(t *testing.T, file, name, password string) {
	t.Helper()
	cmd := exec.Command(shoalBin, "admin", "user", "add", name, "--users-file", file, "--cost", "4")
	cmd.Stdin = strings.NewReader(password + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("admin user add %s: %v\n%s", name, err, out)
	}
}

// TestAuthScenario runs shoal all with a token issuer (keys from a JWKS
// file), local users and rules, and real clients (curl -L, davix, litmus)
// with tokens and passwords; a user added while it runs signs in after
// SIGHUP; metrics count it all; and at the end no line md or its data
// server logged holds a token, a password or a signature.
func TestAuthScenario(t *testing.T) {
	curl := need(t, "curl")
	litmus := need(t, "litmus")
	davixPut, davixGet := need(t, "davix-put"), need(t, "davix-get")
	dir := t.TempDir()
	is := testissuer.New(t)
	jwks := filepath.Join(dir, "issuer.jwks")
	if err := os.WriteFile(jwks, is.JWKS(), 0o600); err != nil {
		t.Fatal(err)
	}
	const aud = "https://shoal.e2e.example"
	usersFile := filepath.Join(dir, "users")
	const alicePW, bobPW = "alice pass phrase", "bob-PASSWORD-7"
	addUser(t, usersFile, "alice", alicePW)
	cfg := filepath.Join(dir, "shoal.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`auth:
  issuers:
    - {url: %q, jwks_file: %q}
  audiences: [%q]
  users_file: %q
  rules:
    - {path: /home/alice, who: "user:alice", rights: [read, create, modify]}
    - {path: /pub, who: anonymous, rights: [read]}
    - {path: /, who: authenticated, rights: [read]}
`, is.URL, jwks, aud, usersFile)), 0o600)
	// Through the data server (all.local_data off): its signed URLs are
	// among the secrets that must stay out of the logs.
	n := startShoalArgs(t, "", []string{"--config", cfg}, "SHOAL_ALL_LOCAL_DATA=false")

	var tokens []string
	mint := func(scope string) string {
		tok := is.Mint(t, is.WLCG("e2e-robot", aud, scope))
		tokens = append(tokens, tok)
		return "Bearer " + tok
	}
	admin := mint("storage.read:/ storage.modify:/")
	reader := mint("storage.read:/data")
	alice := basicCred("alice", alicePW)
	var sigs []string
	keepSig := func(loc string) {
		if u, err := url.Parse(loc); err == nil && u.Query().Get("sig") != "" {
			sigs = append(sigs, u.Query().Get("sig"))
		}
	}

	// Anonymous may not write: 401 with both challenges (loopback).
	r := send(t, "MKCOL", n.URL+"/x", "", nil, nil)
	if ch := strings.Join(r.Header.Values("WWW-Authenticate"), "|"); r.StatusCode != 401 || !strings.Contains(ch, "Bearer") || !strings.Contains(ch, "Basic") {
		t.Fatalf("anonymous MKCOL: %d %q", r.StatusCode, ch)
	}
	for _, p := range []string{"/home", "/home/alice", "/pub", "/data"} {
		if st := status(t, "MKCOL", n.URL+p, admin, nil); st != 201 {
			t.Fatalf("MKCOL %s with the admin token: %d", p, st)
		}
	}

	// curl -L with a token: through the 307 and the 302, the signed URL
	// alone carries the request (curl drops Authorization there).
	src, data := randomFile(t, dir, "one-mib", 1<<20)
	out, _ := run(t, dir, nil, curl, "-sS", "-L", "-D", "-", "-o", "/dev/null", "-w", "%{http_code}", "-T", src, "-H", "Authorization: "+admin, n.URL+"/data/f")
	if !strings.HasSuffix(out, "201") {
		t.Fatalf("curl -L PUT with a token:\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.ToLower(line), "location:") {
			keepSig(strings.TrimSpace(line[len("location:"):]))
		}
	}
	got := filepath.Join(dir, "got")
	if out, _ := run(t, dir, nil, curl, "-sS", "-L", "-o", got, "-w", "%{http_code}", "-H", "Authorization: "+reader, n.URL+"/data/f"); out != "200" {
		t.Fatalf("curl -L GET with a read token: %s", out)
	}
	if b, _ := os.ReadFile(got); string(b) != string(data) {
		t.Fatalf("curl -L GET: %d bytes back of %d", len(b), len(data))
	}
	keepSig(send(t, "GET", n.URL+"/data/f", reader, nil, nil).Header.Get("Location"))
	if st := status(t, "DELETE", n.URL+"/data/f", reader, nil); st != 403 {
		t.Errorf("DELETE with a read token: %d", st)
	}

	// davix with a token.
	if out, code := run(t, dir, nil, davixPut, "-H", "Authorization: "+admin, src, n.URL+"/data/d"); code != 0 {
		t.Fatalf("davix-put: %s", out)
	}
	if out, code := run(t, dir, nil, davixGet, "-H", "Authorization: "+reader, n.URL+"/data/d", got+"2"); code != 0 {
		t.Fatalf("davix-get: %s", out)
	}

	// A local user, HTTP Basic (loopback: allowed in clear).
	r = send(t, "PUT", n.URL+"/home/alice/notes", alice, nil, strings.NewReader("alice's notes"))
	if r.StatusCode != 201 {
		t.Fatalf("alice PUT: %d", r.StatusCode)
	}
	if st := status(t, "PUT", n.URL+"/data/g", alice, nil); st != 403 {
		t.Errorf("alice PUT outside her home: %d", st)
	}
	if st := status(t, "PROPFIND", n.URL+"/data", basicCred("alice", "WRONG-pw-123"), map[string]string{"Depth": "1"}); st != 401 {
		t.Errorf("wrong password: %d", st)
	}
	if st := status(t, "HEAD", n.URL+"/pub", admin+"tampered", nil); st != 401 {
		t.Errorf("tampered token: %d", st)
	}

	// litmus as alice: every group passes.
	if st := status(t, "MKCOL", n.URL+"/home/alice/litmus", alice, nil); st != 201 {
		t.Fatalf("MKCOL litmus: %d", st)
	}
	suites := []string{"basic", "copymove", "props", "locks", "http"}
	out, code := run(t, dir, []string{"TESTS=" + strings.Join(suites, " ")}, litmus, "--keep-going", n.URL+"/home/alice/litmus/", "alice", alicePW)
	for _, m := range litmusSummary.FindAllStringSubmatch(out, -1) {
		if m[4] != "0" {
			t.Errorf("litmus %s as alice: %s of %s tests failed", m[1], m[4], m[2])
		}
	}
	if code != 0 || len(litmusSummary.FindAllStringSubmatch(out, -1)) != len(suites) {
		t.Errorf("litmus as alice: exit %d\n%s", code, out)
	}

	// A user added while md runs signs in after SIGHUP.
	bob := basicCred("bob", bobPW)
	addUser(t, usersFile, "bob", bobPW)
	n.signal(syscall.SIGHUP)
	deadline := time.Now().Add(10 * time.Second)
	for status(t, "PROPFIND", n.URL+"/data", bob, map[string]string{"Depth": "0"}) != 207 {
		if time.Now().After(deadline) {
			t.Fatal("bob cannot sign in after SIGHUP")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The log goes through a buffer flushed every 100 ms: the line may
	// come after bob's first success.
	waitFor(t, 5*time.Second, "the SIGHUP reload in the log", func() bool {
		return strings.Contains(n.stderr.String(), "SIGHUP: reloaded")
	})

	// Metrics count authentications by method and result.
	resp, err := http.Get(n.URL + "/.shoal/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, m := range []string{`shoal_auth_total{method="bearer",result="ok"}`, `shoal_auth_total{method="basic",result="invalid"} `, `shoal_auth_total{method="bearer",result="denied"} 1`} {
		if !strings.Contains(string(metrics), m) {
			t.Errorf("metrics lack %s", m)
		}
	}

	if code := n.stop(t); code != 0 {
		t.Errorf("exit %d", code)
	}
	logs := n.stderr.String()
	if len(sigs) < 2 {
		t.Fatalf("collected %d signatures", len(sigs))
	}
	secrets := append(append([]string{alicePW, bobPW, "WRONG-pw-123", base64.StdEncoding.EncodeToString([]byte("alice:" + alicePW))}, tokens...), sigs...)
	for _, s := range secrets {
		if strings.Contains(logs, s) {
			t.Errorf("the log holds a secret (%.12s…)", s)
		}
	}
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, "sig=") || strings.Contains(line, "Bearer ") || strings.Contains(line, "Basic ") {
			t.Errorf("log line with a credential: %.200s", line)
		}
	}
	for _, want := range []string{"principal=user:alice", "principal=token:e2e-robot@" + is.URL, "msg=audit", "principal=user:bob", "method=PUT object="} {
		if !strings.Contains(logs, want) {
			t.Errorf("the log lacks %q", want)
		}
	}
}
