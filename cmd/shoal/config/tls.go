package config

import (
	"fmt"
	"time"
)

// TLSConfig is the TLS of every role: a PEM certificate chain and key per
// listener (none: that listener speaks plain http) and the CA bundle every
// internal client verifies its peer against. Certificates are reread on
// SIGHUP and when their files change; a handshake takes the current one,
// so transfers in flight keep theirs.
type TLSConfig struct {
	CAFile           string        `mapstructure:"ca_file" doc:"PEM CA bundle md, data servers, gws and shoal admin verify each other's certificates against (empty: the system roots; shoal all with its private CA: DATA/tls/ca.pem)"`
	MinVersion       string        `mapstructure:"min_version" doc:"lowest TLS version served and accepted: 1.2 or 1.3"`
	MDCertFile       string        `mapstructure:"md_cert_file" doc:"md's certificate chain (PEM, leaf first): md serves https when set"`
	MDKeyFile        string        `mapstructure:"md_key_file" doc:"md's private key (PEM)"`
	InternalCertFile string        `mapstructure:"internal_cert_file" doc:"shoal all: certificate chain of md's internal API port on 127.0.0.1, which its data server calls (empty: md's)"`
	InternalKeyFile  string        `mapstructure:"internal_key_file" doc:"shoal all: key of md's internal API port"`
	DiskCertFile     string        `mapstructure:"disk_cert_file" doc:"data server's certificate chain: it serves https and advertises https URLs when set (shoal all: md's when empty)"`
	DiskKeyFile      string        `mapstructure:"disk_key_file" doc:"data server's private key"`
	GWCertFile       string        `mapstructure:"gw_cert_file" doc:"gw's certificate chain: it serves https and advertises https URLs when set"`
	GWKeyFile        string        `mapstructure:"gw_key_file" doc:"gw's private key"`
	Watch            time.Duration `mapstructure:"watch" doc:"how often the certificate files are checked for a change (0: only on SIGHUP, which always rereads them)"`
}

// CertPair is one role's certificate and key files, with the keys that
// set them (for error messages).
type CertPair struct {
	Role, CertKey, Cert, KeyKey, Key string
}

// Set tells whether the role has a certificate.
func (p CertPair) Set() bool { return p.Cert != "" }

// Roles' pairs.
func (t *TLSConfig) MD() CertPair {
	return CertPair{"md", "tls.md_cert_file", t.MDCertFile, "tls.md_key_file", t.MDKeyFile}
}
func (t *TLSConfig) Internal() CertPair {
	return CertPair{"md-internal", "tls.internal_cert_file", t.InternalCertFile, "tls.internal_key_file", t.InternalKeyFile}
}
func (t *TLSConfig) Disk() CertPair {
	return CertPair{"disk", "tls.disk_cert_file", t.DiskCertFile, "tls.disk_key_file", t.DiskKeyFile}
}
func (t *TLSConfig) GW() CertPair {
	return CertPair{"gw", "tls.gw_cert_file", t.GWCertFile, "tls.gw_key_file", t.GWKeyFile}
}

func (t *TLSConfig) validate() error {
	for _, p := range []CertPair{t.MD(), t.Internal(), t.Disk(), t.GW()} {
		if (p.Cert == "") != (p.Key == "") {
			return fmt.Errorf("%s and %s: give both or neither", p.CertKey, p.KeyKey)
		}
	}
	if t.MinVersion != "1.2" && t.MinVersion != "1.3" {
		return fmt.Errorf("tls.min_version: %q is not one of 1.2, 1.3", t.MinVersion)
	}
	if t.Watch < 0 {
		return fmt.Errorf("tls.watch: %v must be 0 (SIGHUP only) or positive", t.Watch)
	}
	return nil
}
