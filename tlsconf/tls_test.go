package tlsconf

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"shoal/internal/testsvc"
)

func TestEnsurePrivateCA(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	pc, err := EnsurePrivateCA(dir, []string{"127.0.0.1", "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	if !pc.Created || pc.Fingerprint == "" {
		t.Fatalf("%+v", pc)
	}
	for _, f := range []struct {
		name string
		mode os.FileMode
	}{{pc.KeyFile, 0o600}, {filepath.Join(dir, "ca.key"), 0o600}, {pc.CAFile, 0o644}, {pc.CertFile, 0o644}} {
		fi, err := os.Stat(f.name)
		if err != nil || fi.Mode().Perm() != f.mode {
			t.Errorf("%s: %v %v, want %v", f.name, fi.Mode(), err, f.mode)
		}
	}
	ca, err := LoadCA(pc.CAFile, filepath.Join(dir, "ca.key"))
	if err != nil {
		t.Fatal(err)
	}
	h, _ := SubjectHash(ca.Cert)
	if b, err := os.ReadFile(filepath.Join(pc.CAPath, h+".0")); err != nil || !bytes.Equal(b, ca.CertPEM) {
		t.Fatalf("capath: %v", err)
	}
	// openssl agrees on the fingerprint it prints.
	{
		openssl := testsvc.NeedTool(t, "openssl")
		out, err := exec.Command(openssl, "x509", "-noout", "-fingerprint", "-sha256", "-in", pc.CertFile).Output()
		if err != nil || !strings.Contains(string(out), "="+pc.Fingerprint) {
			t.Fatalf("openssl fingerprint %q, ours %s (%v)", out, pc.Fingerprint, err)
		}
	}
	// Reused as it is on a later start.
	again, err := EnsurePrivateCA(dir, []string{"localhost", "127.0.0.1"})
	if err != nil || again.Created || again.Fingerprint != pc.Fingerprint {
		t.Fatalf("second start: %+v %v", again, err)
	}
	// A new address: the server certificate is reissued by the same CA.
	third, err := EnsurePrivateCA(dir, []string{"127.0.0.1", "localhost", "::1"})
	if err != nil || third.Created || third.Fingerprint == pc.Fingerprint {
		t.Fatalf("new host: %+v %v", third, err)
	}
	pair, err := tls.LoadX509KeyPair(third.CertFile, third.KeyFile)
	if err != nil || pair.Leaf.CheckSignatureFrom(ca.Cert) != nil || len(pair.Leaf.IPAddresses) != 2 {
		t.Fatalf("reissued certificate: %v", err)
	}
}

// TestPrivateCANamesDiffer: two private CAs made for the same host (two
// `shoal all --tls` on one box, two Pis called raspberrypi) have
// different subjects, so different OpenSSL hashes: both fit in one
// capath as HASH.0.
func TestPrivateCANamesDiffer(t *testing.T) {
	var subjects, hashes []string
	for range 2 {
		dir := t.TempDir()
		pc, err := EnsurePrivateCA(dir, []string{"raspberrypi", "127.0.0.1"})
		if err != nil {
			t.Fatal(err)
		}
		ca, err := LoadCA(pc.CAFile, filepath.Join(dir, "ca.key"))
		if err != nil {
			t.Fatal(err)
		}
		h, err := SubjectHash(ca.Cert)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(ca.Cert.Subject.CommonName, "shoal private CA raspberrypi ") {
			t.Errorf("CA name %q", ca.Cert.Subject.CommonName)
		}
		subjects, hashes = append(subjects, ca.Cert.Subject.String()), append(hashes, h)
	}
	if subjects[0] == subjects[1] || hashes[0] == hashes[1] {
		t.Errorf("two private CAs share a subject or hash: %q %q", subjects, hashes)
	}
}

// serveFast serves h with fasthttp over TLS the way md, disk and gw will:
// the listener wrapped by tls.NewListener with the reloading config.
func serveFast(t *testing.T, cert *ServerCert, h fasthttp.RequestHandler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &fasthttp.Server{Handler: h}
	go func() { _ = srv.Serve(tls.NewListener(ln, cert.TLSConfig())) }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	return "https://" + ln.Addr().String()
}

// TestRealClients: curl --cacert, curl --capath and davix --capath reach
// a fasthttp server over TLS with the private CA's files, and a Go client
// built by ClientConfig verifies it; a client trusting another CA does not.
func TestRealClients(t *testing.T) {
	curl := testsvc.NeedTool(t, "curl")
	davix := testsvc.NeedTool(t, "davix-get")
	pc, err := EnsurePrivateCA(t.TempDir(), []string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	cert, err := LoadServerCert(pc.CertFile, pc.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	url := serveFast(t, cert, func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("hello over tls\n") })
	for _, args := range [][]string{
		{curl, "-sS", "--fail", "--cacert", pc.CAFile, url + "/x"},
		{curl, "-sS", "--fail", "--capath", pc.CAPath, url + "/x"},
		{davix, "--capath", pc.CAPath, url + "/x"},
	} {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env = append(os.Environ(), "CURL_CA_BUNDLE=/nonexistent", "SSL_CERT_FILE=/nonexistent", "X509_CERT_DIR=/nonexistent")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "hello over tls") {
			t.Errorf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	// Without the CA, curl refuses the server.
	if out, err := exec.Command(curl, "-sS", "--fail", url+"/x").CombinedOutput(); err == nil {
		t.Errorf("curl without the CA succeeded: %s", out)
	}
	cfg, err := ClientConfig(pc.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: 10 * time.Second}
	resp, err := c.Get(url + "/x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	other, err := EnsurePrivateCA(t.TempDir(), []string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	cfg2, _ := ClientConfig(other.CAFile)
	c2 := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg2}, Timeout: 10 * time.Second}
	if _, err := c2.Get(url + "/x"); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("a server of another CA was accepted: %v", err)
	}
	// TLS below 1.2 is refused.
	conn, err := tls.Dial("tcp", strings.TrimPrefix(url, "https://"), &tls.Config{RootCAs: cfg.RootCAs, MaxVersion: tls.VersionTLS11})
	if err == nil {
		conn.Close()
		t.Fatal("TLS 1.1 handshake accepted")
	}
}

// peerFingerprint opens a new connection and returns the server
// certificate's fingerprint.
func peerFingerprint(t *testing.T, addr string, cfg *tls.Config) string {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	return Fingerprint(conn.ConnectionState().PeerCertificates[0])
}

// TestRotationKeepsTransfersInFlight: a slow download runs while the
// certificate files are replaced; Watch picks the new pair up, new
// connections get it, and the download completes whole on the old one.
func TestRotationKeepsTransfersInFlight(t *testing.T) {
	dir := t.TempDir()
	ca, err := NewCA("rotation CA")
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := filepath.Join(dir, "server.pem"), filepath.Join(dir, "server.key")
	issue := func() {
		c, k, err := ca.Issue([]string{"127.0.0.1"}, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if err := writeFile(keyFile, k, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := writeFile(certFile, c, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	issue()
	cert, err := LoadServerCert(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go cert.Watch(ctx, 20*time.Millisecond, nil)

	const chunks, chunk = 20, 64 << 10
	started := make(chan struct{})
	url := serveFast(t, cert, func(rc *fasthttp.RequestCtx) {
		rc.SetBodyStreamWriter(func(w *bufio.Writer) {
			buf := bytes.Repeat([]byte("s"), chunk)
			for i := 0; i < chunks; i++ {
				if i == 1 {
					close(started)
				}
				_, _ = w.Write(buf)
				_ = w.Flush()
				time.Sleep(40 * time.Millisecond)
			}
		})
	})
	addr := strings.TrimPrefix(url, "https://")
	cfg := &tls.Config{RootCAs: ca.Pool()}
	before := peerFingerprint(t, addr, cfg)

	type result struct {
		n   int64
		err error
	}
	done := make(chan result, 1)
	go func() {
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: 30 * time.Second}
		resp, err := c.Get(url + "/big")
		if err != nil {
			done <- result{err: err}
			return
		}
		defer resp.Body.Close()
		n, err := io.Copy(io.Discard, resp.Body)
		done <- result{n, err}
	}()
	<-started
	issue()
	deadline := time.Now().Add(5 * time.Second)
	after := before
	for after == before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		after = peerFingerprint(t, addr, cfg)
	}
	if after == before || after != cert.Fingerprint() {
		t.Fatalf("new connections still get the old certificate (%s)", after)
	}
	select {
	case r := <-done:
		if r.err != nil || r.n != chunks*chunk {
			t.Fatalf("download across the rotation: %d bytes, %v", r.n, r.err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("download did not finish")
	}
	// A broken pair (new certificate, key not yet written) keeps the
	// current certificate; Reload says why.
	c, _, _ := ca.Issue([]string{"127.0.0.1"}, time.Hour)
	if err := os.WriteFile(certFile, c, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := cert.Reload(); err == nil {
		t.Fatal("mismatched pair loaded")
	}
	if fp := peerFingerprint(t, addr, cfg); fp != after {
		t.Fatal("a failed reload changed the certificate")
	}
}
