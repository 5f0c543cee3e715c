package main

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"os"
	"strings"

	"shoal/cmd/shoal/config"
	"shoal/tlsconf"
)

// This file turns the tls.* keys into what the servers and clients of a
// command use: server certificates (reloaded on SIGHUP and when their
// files change), listeners that speak TLS, https URLs, and the client
// config internal calls verify their peer with.

// minTLSVersion is tls.min_version as a crypto/tls constant.
func minTLSVersion(c *config.Config) uint16 {
	if c.TLS.MinVersion == "1.3" {
		return tls.VersionTLS13
	}
	return tls.VersionTLS12
}

// serverCert is one listener's certificate, or nil for plain http.
type serverCert struct {
	role string
	cert *tlsconf.ServerCert
	min  uint16
}

// loadServerCert loads p's pair, or returns nil when p is unset. The
// certificate is reread every tls.watch and on each SIGHUP (reloads).
func loadServerCert(ctx context.Context, c *config.Config, log *slog.Logger, reloads *reloaders, p config.CertPair) (*serverCert, error) {
	if !p.Set() {
		return nil, nil
	}
	cert, err := tlsconf.LoadServerCert(p.Cert, p.Key)
	if err != nil {
		return nil, &keyError{key: p.CertKey, err: err}
	}
	sc := &serverCert{role: p.Role, cert: cert, min: minTLSVersion(c)}
	lg := log.With("role", p.Role)
	lg.Info("tls certificate in use", "file", p.Cert, "sha256", cert.Fingerprint())
	if c.TLS.Watch > 0 {
		go cert.Watch(ctx, c.TLS.Watch, lg)
	}
	reloads.add("tls certificate of "+p.Role, func() error {
		if err := cert.Reload(); err != nil {
			return err
		}
		lg.Info("tls certificate in use", "file", p.Cert, "sha256", cert.Fingerprint())
		return nil
	})
	return sc, nil
}

// keyError names the config key whose file could not be used.
type keyError struct {
	key string
	err error
}

func (e *keyError) Error() string { return e.key + ": " + e.err.Error() }
func (e *keyError) Unwrap() error { return e.err }

// listener is ln, serving TLS with the current certificate at each
// handshake when s is set.
func (s *serverCert) listener(ln net.Listener) net.Listener {
	if s == nil {
		return ln
	}
	cfg := s.cert.TLSConfig()
	cfg.MinVersion = max(cfg.MinVersion, s.min)
	return tls.NewListener(ln, cfg)
}

// url is the URL clients reach the bound address a at: https when s is
// set (see reachableURL for unspecified hosts).
func (s *serverCert) url(a net.Addr) string {
	u := reachableURL(a)
	if s != nil {
		u = "https://" + strings.TrimPrefix(u, "http://")
	}
	return u
}

// fingerprint is the current certificate's SHA-256, "" for plain http.
func (s *serverCert) fingerprint() string {
	if s == nil {
		return ""
	}
	return s.cert.Fingerprint()
}

// clientTLS is the config of internal calls (md ↔ data servers ↔ gws,
// shoal admin → md): peers verified against caFile (the system roots when
// empty), at least tls.min_version.
func clientTLS(c *config.Config, caFile string) (*tls.Config, error) {
	cfg, err := tlsconf.ClientConfig(caFile)
	if err != nil {
		return nil, &keyError{key: "tls.ca_file", err: err}
	}
	cfg.MinVersion = max(cfg.MinVersion, minTLSVersion(c))
	return cfg, nil
}

// loopbackClientTLS is cfg for calls to 127.0.0.1 served with s: when its
// certificate does not name 127.0.0.1 (a public certificate), the
// handshake verifies the first DNS name it holds instead, so shoal all's
// data server can reach md's internal port without a certificate of its
// own for the loopback address.
func loopbackClientTLS(cfg *tls.Config, s *serverCert) *tls.Config {
	if s == nil {
		return cfg
	}
	leaf := s.cert.Certificate().Leaf
	if leaf == nil || leaf.VerifyHostname("127.0.0.1") == nil || len(leaf.DNSNames) == 0 {
		return cfg
	}
	cfg = cfg.Clone()
	cfg.ServerName = leaf.DNSNames[0]
	return cfg
}

// localHosts are the names and addresses shoal all's private certificate
// is issued for: this host's name, localhost and the loopback addresses,
// the hosts of listen addresses and public URLs, and, when a listener is
// on an unspecified address, every address of this host's interfaces.
func localHosts(listens []string, urls []string) []string {
	var hosts []string
	seen := map[string]bool{}
	add := func(h string) {
		h = strings.Trim(h, "[]")
		if ip := net.ParseIP(h); ip != nil {
			h = ip.String()
		}
		if h != "" && !seen[h] {
			seen[h] = true
			hosts = append(hosts, h)
		}
	}
	if name, err := os.Hostname(); err == nil {
		add(name)
	}
	add("localhost")
	add("127.0.0.1")
	add("::1")
	anyAddr := false
	for _, l := range listens {
		host, _, err := net.SplitHostPort(l)
		if err != nil {
			continue
		}
		if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
			anyAddr = true
			continue
		}
		add(host)
	}
	for _, u := range urls {
		if rest, ok := strings.CutPrefix(u, "https://"); ok {
			host := rest
			if i := strings.IndexAny(rest, "/?#"); i >= 0 {
				host = rest[:i]
			}
			if h, _, err := net.SplitHostPort(host); err == nil {
				host = h
			}
			add(host)
		}
	}
	if anyAddr {
		if addrs, err := net.InterfaceAddrs(); err == nil {
			for _, a := range addrs {
				if ipn, ok := a.(*net.IPNet); ok && !ipn.IP.IsLinkLocalUnicast() {
					add(ipn.IP.String())
				}
			}
		}
	}
	return hosts
}

// tlsSummary is what a command prints about its TLS before "ready", one
// "KEY VALUE" line each, so scripts can read it like the URLs.
func tlsSummary(caFile, caPath, fingerprint string) string {
	var b strings.Builder
	for _, kv := range [][2]string{{"ca", caFile}, {"capath", caPath}, {"sha256", fingerprint}} {
		if kv[1] != "" {
			b.WriteString(kv[0] + strings.Repeat(" ", max(1, 7-len(kv[0]))) + kv[1] + "\n")
		}
	}
	return b.String()
}
