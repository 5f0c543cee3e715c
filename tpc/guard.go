package tpc

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"syscall"
	"time"

	"shoal"
)

// Guard keeps third-party copies from becoming a way to make shoal fetch
// (or send to) what only shoal can reach: it refuses every outbound
// connection to a loopback, link-local, multicast or unspecified address,
// to an address of this host, to the hosts of shoal's own servers (md
// tells it) and to the configured deny list. It checks the address the
// connection is actually made to, after name resolution and after every
// redirect, so neither a name that resolves to 127.0.0.1 nor a 307 to an
// internal URL gets through. AllowLocal lifts all but the deny list (for
// tests and labs, where peers share a host).
type Guard struct {
	allowLocal bool
	deny       []netip.Prefix

	mu      sync.Mutex
	hosts   func() []string // shoal's own servers' hosts (names or addresses)
	own     map[netip.Addr]bool
	ownAt   time.Time
	resolve func(ctx context.Context, host string) ([]netip.Addr, error)
}

// ownRefresh is how long the set of own addresses is trusted.
const ownRefresh = 30 * time.Second

// alwaysRefused are ranges no copy may reach unless AllowLocal: beside
// what netip's predicates name, "this network" (0/8, which Linux routes to
// the host itself) and NAT64's form of IPv4 addresses (checked again
// unwrapped).
var (
	thisNetwork = netip.MustParsePrefix("0.0.0.0/8")
	nat64       = netip.MustParsePrefix("64:ff9b::/96")
)

// NewGuard returns a guard; deny lists addresses or CIDR prefixes
// refused even with allowLocal.
func NewGuard(allowLocal bool, deny []string) (*Guard, error) {
	g := &Guard{allowLocal: allowLocal, resolve: func(ctx context.Context, host string) ([]netip.Addr, error) {
		return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	}}
	for _, d := range deny {
		d = strings.TrimSpace(d)
		if d == "" {
			continue
		}
		p, err := netip.ParsePrefix(d)
		if err != nil {
			a, aerr := netip.ParseAddr(d)
			if aerr != nil {
				return nil, fmt.Errorf("%q is neither an address nor a CIDR prefix", d)
			}
			p = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())
		}
		g.deny = append(g.deny, p.Masked())
	}
	return g, nil
}

// SetHosts tells the guard where shoal's own servers are (md: its data
// servers and gws): their addresses are refused like this host's.
func (g *Guard) SetHosts(hosts func() []string) {
	g.mu.Lock()
	g.hosts, g.ownAt = hosts, time.Time{}
	g.mu.Unlock()
}

// AllowLocal reports whether local addresses are allowed.
func (g *Guard) AllowLocal() bool { return g.allowLocal }

// Check returns nil if a copy may connect to a, else a KindPermission
// error saying why not.
func (g *Guard) Check(a netip.Addr) error {
	a = a.Unmap()
	for _, p := range g.deny {
		if p.Contains(a) {
			return g.refuse(a, "it is in tpc.deny")
		}
	}
	if g.allowLocal {
		return nil
	}
	if a.Is6() && nat64.Contains(a) {
		b := a.As16()
		if err := g.Check(netip.AddrFrom4([4]byte(b[12:]))); err != nil {
			return err
		}
	}
	switch {
	case a.IsLoopback():
		return g.refuse(a, "a loopback address")
	case a.IsUnspecified(), a.Is4() && thisNetwork.Contains(a):
		return g.refuse(a, "an unspecified address")
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		return g.refuse(a, "a link-local address")
	case a.IsMulticast(), a.IsInterfaceLocalMulticast():
		return g.refuse(a, "a multicast address")
	case !a.IsValid():
		return g.refuse(a, "not an address")
	}
	if g.isOwn(a) {
		return g.refuse(a, "an address of shoal itself")
	}
	return nil
}

func (g *Guard) refuse(a netip.Addr, why string) error {
	hint := " (tpc.allow_local allows it, for tests and labs)"
	if strings.Contains(why, "tpc.deny") {
		hint = ""
	}
	return shoal.Errorf("tpc guard", shoal.KindPermission, "refusing to connect to %s: %s%s", a, why, hint)
}

// isOwn reports whether a is an address of this host or of shoal's own
// servers, refreshing the set when it is older than ownRefresh.
func (g *Guard) isOwn(a netip.Addr) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.own == nil || time.Since(g.ownAt) > ownRefresh {
		g.refreshOwn()
	}
	return g.own[a]
}

// refreshOwn rebuilds the set of own addresses (g.mu held): the host's
// interfaces, and the hosts of shoal's servers, names resolved within a
// few seconds (one that does not resolve is left out).
func (g *Guard) refreshOwn() {
	own := map[netip.Addr]bool{}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, ad := range addrs {
			if ipn, ok := ad.(*net.IPNet); ok {
				if a, ok := netip.AddrFromSlice(ipn.IP); ok {
					own[a.Unmap()] = true
				}
			}
		}
	}
	if g.hosts != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		for _, h := range g.hosts() {
			h = strings.Trim(h, "[]")
			if a, err := netip.ParseAddr(h); err == nil {
				own[a.Unmap()] = true
				continue
			}
			if as, err := g.resolve(ctx, h); err == nil {
				for _, a := range as {
					own[a.Unmap()] = true
				}
			}
		}
		cancel()
	}
	g.own, g.ownAt = own, time.Now()
}

// control is the dialer's check of the address it is about to connect
// to (net.Dialer.ControlContext).
func (g *Guard) control(_ context.Context, _, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return shoal.Errorf("tpc guard", shoal.KindPermission, "refusing to connect to %q: not an address", address)
	}
	return g.Check(ap.Addr())
}
