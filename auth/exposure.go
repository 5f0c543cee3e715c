package auth

import (
	"fmt"
	"net"
)

// IsLoopback reports whether host (an address or "localhost") is on
// loopback. An empty or unspecified host (":8080", "0.0.0.0") is not:
// it listens on every interface.
func IsLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Secure reports whether a connection may carry Basic credentials: it is
// TLS, or it comes from loopback (tests, a local proxy).
func Secure(isTLS bool, remote net.IP) bool { return isTLS || (remote != nil && remote.IsLoopback()) }

// CheckListen is the secure-by-default start check of a public listener
// (HOST:PORT): on a non-loopback address, a node with no issuer, no users
// file and no rules would serve anyone anonymously, so it refuses to
// start, naming the keys to set. Rules granting anonymous rights are the
// operator saying so explicitly.
func (a *Auth) CheckListen(listen string) error {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return fmt.Errorf("listen address %q: %w", listen, err)
	}
	if IsLoopback(host) || a.tokens != nil || a.users != nil || a.rules.Len() > 0 {
		return nil
	}
	return fmt.Errorf("refusing to listen on %s with no authentication: set auth.issuers (bearer tokens), auth.users_file (Basic users) or auth.rules (to grant anonymous access explicitly, e.g. {path: /, who: anonymous, rights: [read]})", listen)
}
