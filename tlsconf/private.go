package tlsconf

import (
	"bytes"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"

	"shoal/internal/atomicfile"
)

// Files of a private CA directory.
const (
	caCertName     = "ca.pem"
	caKeyName      = "ca.key"
	serverCertName = "server.pem"
	serverKeyName  = "server.key"
	caPathName     = "capath"
)

// PrivateCA is what EnsurePrivateCA made or found.
type PrivateCA struct {
	// CAFile is the CA certificate: `curl --cacert CAFile`.
	CAFile string
	// CAPath is a directory holding the CA as HASH.0 (OpenSSL's hashed
	// directory): `davix --capath CAPath`, `curl --capath CAPath`.
	CAPath string
	// CertFile and KeyFile are the server certificate and key (0600).
	CertFile, KeyFile string
	// Fingerprint is the server certificate's SHA-256 (see Fingerprint).
	Fingerprint string
	// Created tells whether this call made the CA (false: reused).
	Created bool
}

// EnsurePrivateCA makes, once, under dir a CA (ca.pem, ca.key) and a server
// certificate signed by it for hosts (DNS names and IP addresses;
// server.pem, server.key), keys 0600, plus capath/HASH.0. Later calls reuse
// them; the server certificate alone is reissued, by the same CA, when it
// does not cover every host asked for or is within 30 days of its end, so
// clients that trust the CA keep working.
func EnsurePrivateCA(dir string, hosts []string) (*PrivateCA, error) {
	if len(hosts) == 0 {
		return nil, errors.New("private CA: no host names or addresses")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	pc := &PrivateCA{
		CAFile:   filepath.Join(dir, caCertName),
		CAPath:   filepath.Join(dir, caPathName),
		CertFile: filepath.Join(dir, serverCertName),
		KeyFile:  filepath.Join(dir, serverKeyName),
	}
	caKey := filepath.Join(dir, caKeyName)
	ca, err := LoadCA(pc.CAFile, caKey)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if ca, err = NewCA(privateCAName(hosts[0])); err != nil {
			return nil, err
		}
		// The key first: a CA certificate without its key is unusable.
		if err := writeFile(caKey, ca.KeyPEM, 0o600); err != nil {
			return nil, err
		}
		if err := writeFile(pc.CAFile, ca.CertPEM, 0o644); err != nil {
			return nil, err
		}
		pc.Created = true
	case err != nil:
		return nil, fmt.Errorf("private CA in %s: %w", dir, err)
	}
	if err := writeHashed(pc.CAPath, ca); err != nil {
		return nil, err
	}
	if pc.Created || !serverCertCovers(pc.CertFile, pc.KeyFile, ca, hosts) {
		certPEM, keyPEM, err := ca.Issue(hosts, ServerValidity)
		if err != nil {
			return nil, err
		}
		if err := writeFile(pc.KeyFile, keyPEM, 0o600); err != nil {
			return nil, err
		}
		if err := writeFile(pc.CertFile, certPEM, 0o644); err != nil {
			return nil, err
		}
	}
	cert, err := tls.LoadX509KeyPair(pc.CertFile, pc.KeyFile)
	if err != nil {
		return nil, err
	}
	pc.Fingerprint = Fingerprint(cert.Leaf)
	return pc, nil
}

// privateCAName is the subject of a new private CA: the host and a
// random id. Every `shoal all --tls` on a host (every Pi called
// raspberrypi) would otherwise make the same subject, so the same OpenSSL
// subject hash, and two sites' CAs would collide in one capath or
// /etc/grid-security/certificates. A CA already on disk keeps its name.
func privateCAName(host string) string {
	id := make([]byte, 4)
	rand.Read(id) // never fails (crypto/rand)
	return "shoal private CA " + host + " " + hex.EncodeToString(id)
}

// serverCertCovers reports whether the pair on disk is good to reuse:
// parses, signed by ca, valid for 30 more days, names every host.
func serverCertCovers(certFile, keyFile string, ca *CA, hosts []string) bool {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil || cert.Leaf == nil {
		return false
	}
	leaf := cert.Leaf
	if leaf.CheckSignatureFrom(ca.Cert) != nil || time.Until(leaf.NotAfter) < renewBefore {
		return false
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			if !slices.ContainsFunc(leaf.IPAddresses, ip.Equal) {
				return false
			}
		} else if !slices.Contains(leaf.DNSNames, h) {
			return false
		}
	}
	return true
}

// writeHashed writes dir/HASH.0 holding the CA certificate (a copy, not a
// link, so the directory can be copied to a client as it is).
func writeHashed(dir string, ca *CA) error {
	h, err := SubjectHash(ca.Cert)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	name := filepath.Join(dir, h+".0")
	if old, err := os.ReadFile(name); err == nil && bytes.Equal(old, ca.CertPEM) {
		return nil
	}
	return writeFile(name, ca.CertPEM, 0o644)
}

// writeFile writes whole or not at all (atomicfile), so a crash never
// leaves half a key.
func writeFile(name string, data []byte, perm os.FileMode) error {
	return atomicfile.Write(name, data, perm)
}
