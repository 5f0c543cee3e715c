package tpc

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Defaults of Options.
const (
	DefaultConnectTimeout   = 60 * time.Second
	DefaultFirstByteTimeout = 120 * time.Second
	DefaultIdleTimeout      = 60 * time.Second
	DefaultMarkerInterval   = 5 * time.Second
	// expectContinueWait is how long a push waits for 100 Continue before
	// sending its body anyway (a peer that ignores Expect).
	expectContinueWait = 5 * time.Second
	// maxRedirects bounds the 3xx a push or pull follows.
	maxRedirects = 10
)

// Options configure a Client: the outbound side every md, data server and
// gw shares.
type Options struct {
	// MinTLS is the lowest TLS version of outbound https (0: TLS 1.2).
	MinTLS uint16
	// CAFiles and CADirs are PEM certificates trusted beside the system's
	// roots: the cluster's CA (tls.ca_file) and the grid CAs of TPC peers
	// (tpc.ca_file, tpc.ca_dir, e.g. /etc/grid-security/certificates).
	CAFiles, CADirs []string
	// AllowLocal lets copies reach loopback, link-local and this host's
	// addresses (tests, labs); Deny lists addresses and CIDR prefixes
	// refused always (see Guard).
	AllowLocal bool
	Deny       []string
	// Timeouts: to connect (and finish the TLS handshake); from the end
	// of a request to the first byte of its answer; and without progress
	// while a body streams. Zero: the defaults.
	ConnectTimeout, FirstByteTimeout, IdleTimeout time.Duration
	// MarkerInterval is how often the 202 stream gets a marker (0: 5 s).
	MarkerInterval time.Duration
	// UserAgent of outbound requests (empty: "shoal-tpc").
	UserAgent string
	// Logger gets one line per transfer (never a header, never a query);
	// nil: slog.Default().
	Logger *slog.Logger
}

// Client makes the outbound requests of third-party copies and serves
// their marker streams. It is safe for concurrent use.
type Client struct {
	opts  Options
	guard *Guard
	http  *http.Client // follows redirects (GET, HEAD, DELETE)
	// pushHTTP leaves redirects to Push, which sends the body again on
	// each (Go's client would turn a PUT's 302 into a GET).
	pushHTTP *http.Client
	log      *slog.Logger
	stats    stats
}

// New builds a client: the guard, the TLS roots (system roots and the
// configured CA files and directories), the transport.
func New(opts Options) (*Client, error) {
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = DefaultConnectTimeout
	}
	if opts.FirstByteTimeout <= 0 {
		opts.FirstByteTimeout = DefaultFirstByteTimeout
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	if opts.MarkerInterval <= 0 {
		opts.MarkerInterval = DefaultMarkerInterval
	}
	if opts.UserAgent == "" {
		opts.UserAgent = "shoal-tpc"
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	g, err := NewGuard(opts.AllowLocal, opts.Deny)
	if err != nil {
		return nil, fmt.Errorf("tpc.deny: %w", err)
	}
	roots, err := rootPool(opts.CAFiles, opts.CADirs)
	if err != nil {
		return nil, err
	}
	c := &Client{opts: opts, guard: g, log: opts.Logger}
	c.stats.init()
	dialer := &net.Dialer{Timeout: opts.ConnectTimeout, KeepAlive: 30 * time.Second, ControlContext: g.control}
	tr := &http.Transport{
		Proxy:                 nil, // never a proxy from the environment: the guard must see the peer
		DialContext:           dialer.DialContext,
		TLSClientConfig:       &tls.Config{MinVersion: max(opts.MinTLS, tls.VersionTLS12), RootCAs: roots},
		TLSHandshakeTimeout:   opts.ConnectTimeout,
		ResponseHeaderTimeout: opts.FirstByteTimeout,
		ExpectContinueTimeout: expectContinueWait,
		DisableCompression:    true, // the bytes as stored, and their Content-Length
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       30 * time.Second,
		ReadBufferSize:        256 << 10,
		WriteBufferSize:       256 << 10,
	}
	c.http = &http.Client{Transport: tr, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return fmt.Errorf("more than %d redirects", maxRedirects)
		}
		return nil
	}}
	c.pushHTTP = &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
	return c, nil
}

// Guard is the client's guard (md tells it its servers' hosts).
func (c *Client) Guard() *Guard { return c.guard }

// MarkerInterval is the interval between markers.
func (c *Client) MarkerInterval() time.Duration { return c.opts.MarkerInterval }

// rootPool is the system's roots plus every certificate of files and of
// the PEM files in dirs (*.pem, *.crt, and OpenSSL's hashed HASH.N names).
func rootPool(files, dirs []string) (*x509.CertPool, error) {
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	for _, f := range files {
		if f == "" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("tpc CA file: %w", err)
		}
		if !pool.AppendCertsFromPEM(b) {
			return nil, fmt.Errorf("tpc CA file %s: no PEM certificate", f)
		}
	}
	for _, d := range dirs {
		if d == "" {
			continue
		}
		ents, err := os.ReadDir(d)
		if err != nil {
			return nil, fmt.Errorf("tpc CA directory: %w", err)
		}
		n := 0
		for _, e := range ents {
			name := e.Name()
			if e.IsDir() || !(strings.HasSuffix(name, ".pem") || strings.HasSuffix(name, ".crt") || hashedName(name)) {
				continue
			}
			b, err := os.ReadFile(filepath.Join(d, name))
			if err == nil && pool.AppendCertsFromPEM(b) {
				n++
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("tpc CA directory %s: no PEM certificate (*.pem, *.crt, HASH.N)", d)
		}
	}
	return pool, nil
}

// hashedName reports whether name is an OpenSSL hashed-directory
// certificate, HASH.N: N counts the CAs whose subjects share a hash, so
// a second one is HASH.1 (HASH.r0, a CRL, and HASH.signing_policy are
// not certificates).
func hashedName(name string) bool {
	i := strings.LastIndexByte(name, '.')
	if i <= 0 || i == len(name)-1 {
		return false
	}
	for _, c := range name[i+1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// newRequest makes an outbound request to u with the copy's transfer
// headers and shoal's User-Agent.
func (c *Client) newRequest(ctx context.Context, method, u string, r *Request) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", c.opts.UserAgent)
	for _, h := range r.Transfer {
		req.Header.Add(h.Name, h.Value)
	}
	return req, nil
}
