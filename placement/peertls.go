package placement

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/url"
	"sync"
	"time"
)

// peerRecheck is how long a data server's certificate, once verified,
// is taken as good: a server that rotates to a certificate the cluster
// CA did not sign stops being live within this plus the server TTL.
const peerRecheck = time.Minute

// peerDialTimeout bounds the TLS handshake md makes to check a server.
const peerDialTimeout = 5 * time.Second

// peerCheck vets the URL a data server or gw advertises in its heartbeat
// when the cluster runs TLS (New's peerTLS set): clients are sent to that
// URL with signed URLs, and md itself calls it, so it must be https and
// serve a certificate that verifies against the cluster CA for its host.
// A heartbeat is signed with the cluster secret, so this is what stops a
// server with the secret but the wrong certificate (or none) from taking
// writes: md refuses its heartbeat and it never becomes live.
type peerCheck struct {
	cfg *tls.Config
	mu  sync.Mutex
	ok  map[string]time.Time // URL → when its certificate last verified
}

func newPeerCheck(cfg *tls.Config) *peerCheck {
	if cfg == nil {
		return nil
	}
	return &peerCheck{cfg: cfg, ok: map[string]time.Time{}}
}

// verify returns nil when rawURL is a verified https server, else why not.
func (p *peerCheck) verify(ctx context.Context, rawURL string) error {
	if p == nil {
		return nil
	}
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return fmt.Errorf("url %q is not an absolute URL", rawURL)
	}
	if u.Scheme != "https" {
		return fmt.Errorf("md runs TLS and refuses %s: a data server or gw must serve https (set its certificate, tls.disk_cert_file or tls.gw_cert_file, and an https public_url)", rawURL)
	}
	now := time.Now()
	p.mu.Lock()
	last, ok := p.ok[rawURL]
	p.mu.Unlock()
	if ok && now.Sub(last) < peerRecheck {
		return nil
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "443")
	}
	cfg := p.cfg.Clone()
	if cfg.ServerName == "" {
		cfg.ServerName = u.Hostname()
	}
	ctx, cancel := context.WithTimeout(ctx, peerDialTimeout)
	defer cancel()
	d := tls.Dialer{Config: cfg}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		p.mu.Lock()
		delete(p.ok, rawURL)
		p.mu.Unlock()
		return fmt.Errorf("md cannot verify %s against the cluster CA (tls.ca_file): %v", rawURL, err)
	}
	conn.Close()
	p.mu.Lock()
	p.ok[rawURL] = now
	p.mu.Unlock()
	return nil
}
