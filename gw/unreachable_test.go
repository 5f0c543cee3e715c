package gw

import (
	"bytes"
	"testing"
	"time"

	"shoal"
	"shoal/storetest"
	"shoal/wire"
)

// TestUnreachableIsNot507: a gw that cannot reach one of a PUT's shard
// (or copy) servers answers 503 with Retry-After and the kind
// "unavailable" — retry later, elsewhere — never 507 ("insufficient
// storage"), which clients take as "no space, do not retry". Nothing is
// left on the servers that took their part.
func TestUnreachableIsNot507(t *testing.T) {
	c := startCluster(t, 6)
	_, gwURL := gateway(t, c, 32<<10)
	replica3, _ := shoal.ParseLayout("replica:3")
	data := storetest.Data(9, 100<<10)
	c.Disks[2].Stop()
	for _, tc := range []struct {
		name    string
		layout  shoal.Layout
		servers []string
	}{
		{"ec:4+2", ec42, c.IDs()},
		{"replica:3", replica3, c.IDs()[:3]},
	} {
		u := wire.GatewayURL(c.Keys, gwURL, "PUT", "dead01", "", tc.layout, tc.servers, time.Now().Add(time.Minute))
		st, h, body := httpDo(t, "PUT", u, bytes.NewReader(data), nil)
		if st != 503 || h.Get("Retry-After") == "" || h.Get(wire.HeaderKind) != shoal.KindUnavailable.String() {
			t.Errorf("%s PUT with server 2 down: %d (Retry-After %q, kind %q) %s, want 503 with Retry-After, kind unavailable",
				tc.name, st, h.Get("Retry-After"), h.Get(wire.HeaderKind), body)
		}
		for i, r := range c.Remotes() {
			if i == 2 {
				continue
			}
			if _, err := r.Open(t.Context(), "dead01"); !shoal.IsKind(err, shoal.KindNotFound) {
				t.Errorf("%s: server %d kept its part of the failed PUT: %v", tc.name, i, err)
			}
		}
	}
}
