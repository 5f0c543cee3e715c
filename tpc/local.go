package tpc

import (
	"net"
	"net/netip"
	"net/url"
	"strings"
)

// Endpoint is a host and port, the way two URLs are compared to tell
// whether they name the same server: the host in lower case without a
// trailing dot (an IP address in its canonical form), the port explicit.
type Endpoint struct{ Host, Port string }

// defaultPort is the port of a scheme's URLs without one.
func defaultPort(scheme string) string {
	if strings.EqualFold(scheme, "https") || strings.EqualFold(scheme, "davs") {
		return "443"
	}
	return "80"
}

// normHost is a host name or address in the form Endpoint keeps.
func normHost(h string) string {
	h = strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
	if a, err := netip.ParseAddr(h); err == nil {
		return a.Unmap().String()
	}
	return h
}

// EndpointOf is u's endpoint (u's scheme gives the default port).
func EndpointOf(u *url.URL) Endpoint {
	p := u.Port()
	if p == "" {
		p = defaultPort(u.Scheme)
	}
	return Endpoint{Host: normHost(u.Hostname()), Port: p}
}

// ParseEndpoints reads URLs ("http://host:port/…") and host names or
// HOST:PORT pairs into endpoints; a name without port stands for ports
// 80 and 443. Entries that parse as neither are skipped.
func ParseEndpoints(list []string) []Endpoint {
	var out []Endpoint
	for _, s := range list {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if strings.Contains(s, "://") {
			if u, err := url.Parse(s); err == nil && u.Host != "" {
				out = append(out, EndpointOf(u))
			}
			continue
		}
		if h, p, err := net.SplitHostPort(s); err == nil {
			out = append(out, Endpoint{normHost(h), p})
			continue
		}
		out = append(out, Endpoint{normHost(s), "80"}, Endpoint{normHost(s), "443"})
	}
	return out
}

// IsLocal reports whether u names the server a request came to: the
// request's Host header (a Host without port matches the default ports,
// as a TLS-terminating proxy in front may drop it) or one of own (its
// configured URLs and names). Schemes are not compared: one host and
// port is one server.
func IsLocal(u *url.URL, host string, own []Endpoint) bool {
	e := EndpointOf(u)
	if host != "" {
		h, p, err := net.SplitHostPort(host)
		if err != nil {
			h, p = host, ""
		}
		if normHost(h) == e.Host && (p == e.Port || p == "" && (e.Port == "80" || e.Port == "443")) {
			return true
		}
	}
	for _, o := range own {
		if o == e {
			return true
		}
	}
	return false
}
