package tlsconf

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"shoal/internal/testsvc"
)

// TestSubjectHashMatchesOpenSSL compares SubjectHash with `openssl x509
// -hash` for shoal's own CA subject and for subjects that exercise the
// canonical form (case, runs of spaces, several attributes, a
// multi-valued RDN, non-ASCII).
func TestSubjectHashMatchesOpenSSL(t *testing.T) {
	openssl := testsvc.NeedTool(t, "openssl")
	ca, err := NewCA("shoal private CA 127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	certs := []*x509.Certificate{ca.Cert}
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	for _, name := range []pkix.Name{
		{CommonName: "  Shoal   TEST\tCA  ", Organization: []string{"ACME Corp"}, Country: []string{"CH"}},
		{CommonName: "Jörg's CA", OrganizationalUnit: []string{"Grid", "Storage"}},
		{ExtraNames: []pkix.AttributeTypeAndValue{{Type: asn1.ObjectIdentifier{2, 5, 4, 3}, Value: "UPPER lower"}}},
	} {
		tmpl := &x509.Certificate{SerialNumber: serial(), Subject: name, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
		if err != nil {
			t.Fatal(err)
		}
		c, _ := x509.ParseCertificate(der)
		certs = append(certs, c)
	}
	// A multi-valued RDN (two attributes in one SET), hand-encoded.
	rdn := pkix.RDNSequence{{{Type: asn1.ObjectIdentifier{2, 5, 4, 10}, Value: "Zeta"}, {Type: asn1.ObjectIdentifier{2, 5, 4, 3}, Value: "Alpha  Beta"}}}
	rawSubj, _ := asn1.Marshal(rdn)
	tmpl := &x509.Certificate{SerialNumber: serial(), RawSubject: rawSubj, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	certs = append(certs, c)

	dir := t.TempDir()
	for i, c := range certs {
		file := filepath.Join(dir, "c.pem")
		if err := os.WriteFile(file, pemBlock("CERTIFICATE", c.Raw), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(openssl, "x509", "-hash", "-noout", "-in", file).Output()
		if err != nil {
			t.Fatal(err)
		}
		got, err := SubjectHash(c)
		if err != nil {
			t.Fatal(err)
		}
		if want := strings.TrimSpace(string(out)); got != want {
			t.Errorf("cert %d (%s): hash %s, openssl says %s", i, c.Subject, got, want)
		}
	}
}
