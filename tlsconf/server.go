// Package tlsconf is shoal's TLS setup: server certificates that are
// reloaded without a restart (SIGHUP calls Reload; Watch polls the files),
// client configs that verify peers against a configured CA, and the
// private CA that `shoal all` makes once under its data directory when TLS
// is asked for and no certificate is given.
//
// It is standard library only and must not import md, gw, diskserver or
// catalog. Servers are fasthttp: wrap the listener with
// tls.NewListener(ln, cert.TLSConfig()) and call Serve on it, which keeps
// GetCertificate (fasthttp's ServeTLS variants load a fixed certificate).
package tlsconf

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultWatchInterval is how often Watch looks at the certificate files.
const DefaultWatchInterval = 5 * time.Second

// ServerCert is a server certificate chain and key read from PEM files,
// swapped atomically when they change. A handshake takes the certificate
// current at that moment; connections already up keep theirs, so
// transfers in flight are never dropped by a rotation.
type ServerCert struct {
	certFile, keyFile string

	cur atomic.Pointer[loadedCert]
	mu  sync.Mutex // one Reload at a time
}

type loadedCert struct {
	cert         *tls.Certificate
	certPEM, key []byte // file contents, to tell a change
}

// LoadServerCert reads the chain (leaf first) and the key.
func LoadServerCert(certFile, keyFile string) (*ServerCert, error) {
	s := &ServerCert{certFile: certFile, keyFile: keyFile}
	if _, err := s.reload(); err != nil {
		return nil, err
	}
	return s, nil
}

// Reload rereads the files. On any error the current certificate stays.
func (s *ServerCert) Reload() error {
	_, err := s.reload()
	return err
}

// reload reports whether the certificate changed.
func (s *ServerCert) reload() (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	certPEM, err := os.ReadFile(s.certFile)
	if err != nil {
		return false, fmt.Errorf("tls certificate: %w", err)
	}
	keyPEM, err := os.ReadFile(s.keyFile)
	if err != nil {
		return false, fmt.Errorf("tls key: %w", err)
	}
	if old := s.cur.Load(); old != nil && bytes.Equal(old.certPEM, certPEM) && bytes.Equal(old.key, keyPEM) {
		return false, nil
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		// Also what a half-written pair gives (new chain, old key): the
		// next Reload or poll picks up the finished pair.
		return false, fmt.Errorf("tls certificate %s and key %s: %w", s.certFile, s.keyFile, err)
	}
	s.cur.Store(&loadedCert{cert: &cert, certPEM: certPEM, key: keyPEM})
	return true, nil
}

// Certificate is the current certificate.
func (s *ServerCert) Certificate() *tls.Certificate { return s.cur.Load().cert }

// Fingerprint is the SHA-256 of the current leaf certificate.
func (s *ServerCert) Fingerprint() string { return Fingerprint(s.Certificate().Leaf) }

// TLSConfig is a server config (TLS 1.2 and up) serving the current
// certificate at each handshake.
func (s *ServerCert) TLSConfig() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		NextProtos: []string{"http/1.1"},
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return s.cur.Load().cert, nil
		},
	}
}

// Watch rereads the files every interval until ctx ends and swaps the
// certificate when they changed and parse. Errors are logged, once per
// distinct error, without the key.
func (s *ServerCert) Watch(ctx context.Context, interval time.Duration, log *slog.Logger) {
	if interval <= 0 {
		interval = DefaultWatchInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	lastErr := ""
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		changed, err := s.reload()
		switch {
		case err != nil && err.Error() != lastErr:
			lastErr = err.Error()
			if log != nil {
				log.Warn("tls certificate not reloaded; the current one stays", "err", err)
			}
		case err == nil:
			lastErr = ""
			if changed && log != nil {
				log.Info("tls certificate reloaded", "file", s.certFile, "sha256", s.Fingerprint())
			}
		}
	}
}

// Fingerprint is a certificate's SHA-256 in the colon-separated
// upper-case hex that `openssl x509 -fingerprint -sha256` and browsers
// show.
func Fingerprint(cert *x509.Certificate) string {
	if cert == nil {
		return ""
	}
	sum := sha256.Sum256(cert.Raw)
	var b strings.Builder
	for i, c := range sum {
		if i > 0 {
			b.WriteByte(':')
		}
		fmt.Fprintf(&b, "%02X", c)
	}
	return b.String()
}
