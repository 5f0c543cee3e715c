package testhttp

import (
	"crypto/tls"
	"net"
	"testing"
	"time"

	"shoal/tlsconf"
)

// ServerTLS is a server TLS config with a certificate of ca for
// 127.0.0.1, valid for an hour.
func ServerTLS(t testing.TB, ca *tlsconf.CA) *tls.Config {
	t.Helper()
	certPEM, keyPEM, err := ca.Issue([]string{"127.0.0.1"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
}

// ListenTLS is Listen serving TLS with a certificate of ca (ServerTLS),
// and its https base URL.
func ListenTLS(t testing.TB, ca *tlsconf.CA) (net.Listener, string) {
	t.Helper()
	ln, url := Listen(t)
	return tls.NewListener(ln, ServerTLS(t, ca)), "https" + url[len("http"):]
}
