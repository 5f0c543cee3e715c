package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
)

// LoadPool reads every certificate of a PEM file (a CA bundle) into a pool.
func LoadPool(caFile string) (*x509.CertPool, error) {
	b, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("tls ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("tls ca %s: no PEM certificate", caFile)
	}
	return pool, nil
}

// ClientConfig is the config of md, data servers and gws calling each
// other: TLS 1.2 and up, peers verified against the CAs of caFile (empty:
// the system's roots).
func ClientConfig(caFile string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile == "" {
		return cfg, nil
	}
	pool, err := LoadPool(caFile)
	if err != nil {
		return nil, err
	}
	cfg.RootCAs = pool
	return cfg, nil
}
