package tpc

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"testing"

	"shoal"
)

// TestGuard: loopback, link-local (the cloud metadata address included),
// unspecified, multicast, this host's and shoal's servers' addresses are
// refused, in every spelling; allow_local lifts that but not the deny
// list; public addresses pass.
func TestGuard(t *testing.T) {
	g, err := NewGuard(false, []string{"203.0.113.0/24", "2001:db8:dead::7"})
	if err != nil {
		t.Fatal(err)
	}
	g.resolve = func(_ context.Context, host string) ([]netip.Addr, error) {
		if host == "disk1.internal" {
			return []netip.Addr{netip.MustParseAddr("198.51.100.7")}, nil
		}
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	g.SetHosts(func() []string {
		return []string{"disk1.internal", "198.51.100.8", "[2001:db8:1::9]", "nowhere.invalid"}
	})
	own := ""
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && !ipn.IP.IsLoopback() && !ipn.IP.IsLinkLocalUnicast() {
				own = ipn.IP.String()
				break
			}
		}
	}
	refused := []string{"127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1", "0.0.0.0", "0.1.2.3", "::",
		"169.254.169.254", "fe80::1", "224.0.0.1", "ff02::1", "64:ff9b::7f00:1",
		"203.0.113.9", "2001:db8:dead::7", "198.51.100.7", "198.51.100.8", "2001:db8:1::9"}
	if own != "" {
		refused = append(refused, own)
	}
	for _, a := range refused {
		err := g.Check(netip.MustParseAddr(a))
		if !shoal.IsKind(err, shoal.KindPermission) {
			t.Errorf("%s: %v, want refused", a, err)
		}
	}
	for _, a := range []string{"192.0.2.1", "8.8.8.8", "2001:db8::1", "10.1.2.3", "64:ff9b::808:808"} {
		if err := g.Check(netip.MustParseAddr(a)); err != nil {
			t.Errorf("%s refused: %v", a, err)
		}
	}
	if err := g.Check(netip.MustParseAddr("127.0.0.1")); !strings.Contains(err.Error(), "tpc.allow_local") {
		t.Errorf("the refusal does not name the switch: %v", err)
	}

	open, _ := NewGuard(true, []string{"203.0.113.0/24"})
	for _, a := range []string{"127.0.0.1", "::1", "169.254.169.254"} {
		if err := open.Check(netip.MustParseAddr(a)); err != nil {
			t.Errorf("allow_local: %s refused: %v", a, err)
		}
	}
	if err := open.Check(netip.MustParseAddr("203.0.113.1")); err == nil {
		t.Error("allow_local let a denied address through")
	}
	if _, err := NewGuard(false, []string{"not-an-address"}); err == nil {
		t.Error("a bad deny entry accepted")
	}
}
