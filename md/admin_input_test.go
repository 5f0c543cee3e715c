package md

import (
	"strings"
	"testing"

	"shoal"
	"shoal/wire"
)

// TestAdminInputErrors: md's admin endpoints refuse bad input with its
// kind and a reason that names what was wrong: a missing directory for
// quota set/rm and pool set, a pool name that is not one, a negative
// jobs limit.
func TestAdminInputErrors(t *testing.T) {
	e := newEnv(t, DataProxy)
	cl := wire.NewClient(e.url, e.keys)
	files := int64(10)
	for _, c := range []struct {
		what, path string
		req        any
		kind       shoal.Kind
		names      string
	}{
		{"quota set of a missing directory", wire.PathAdminQuotaSet, wire.QuotaSetRequest{Dir: "/nonexistent", Files: &files}, shoal.KindNotFound, "/nonexistent"},
		{"quota rm of a missing directory", wire.PathAdminQuotaRm, wire.QuotaDirRequest{Dir: "/nonexistent"}, shoal.KindNotFound, "/nonexistent"},
		{"pool set of a missing directory", wire.PathAdminPoolSet, wire.PoolSetRequest{Dir: "/nonexistent", Pool: shoal.DefaultPool}, shoal.KindNotFound, "/nonexistent"},
		{"pool add with a space", wire.PathAdminPoolAdd, wire.PoolAddRequest{Name: "bad name", Layout: "replica:1"}, shoal.KindInvalid, `"bad name"`},
		{"pool add with a slash", wire.PathAdminPoolAdd, wire.PoolAddRequest{Name: "a/b", Layout: "replica:1"}, shoal.KindInvalid, `"a/b"`},
		{"pool add of the gws' pool", wire.PathAdminPoolAdd, wire.PoolAddRequest{Name: shoal.GatewayPool, Layout: "replica:1"}, shoal.KindInvalid, "reserved"},
		{"jobs with a negative limit", wire.PathAdminJobs, wire.JobsRequest{Limit: -3}, shoal.KindInvalid, "-3"},
	} {
		_, err := cl.Call(c.path, c.req, nil)
		if !shoal.IsKind(err, c.kind) || !strings.Contains(err.Error(), c.names) {
			t.Errorf("%s: %v, want kind %v naming %s", c.what, err, c.kind, c.names)
		}
	}
	var ps []shoal.Pool
	if _, err := cl.Call(wire.PathAdminPools, struct{}{}, &ps); err != nil || len(ps) != 1 {
		t.Errorf("pools after refused adds: %+v, %v; want the default pool alone", ps, err)
	}
}
