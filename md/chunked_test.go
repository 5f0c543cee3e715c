package md

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"strings"
	"testing"
)

// TestChunkedOutsideQuotas: a PUT of unknown length outside every quota
// is not cut at md.chunked_reserve, which is what it reserves on quotas
// (TestQuotaReservations: under one it is cut at the room left); only
// md.max_put_body, when set, bounds it. Through md and through a 307.
func TestChunkedOutsideQuotas(t *testing.T) {
	body := make([]byte, 200_000)
	rand.Read(body)
	for _, mode := range []string{DataRedirect, DataProxy} {
		t.Run(mode, func(t *testing.T) {
			e := newEnv(t, mode, func(o *Options) { o.ChunkedReserve = 64 << 10 })
			e.do("MKCOL", "/free", nil, nil).want(t, "MKCOL", 201, "")
			r, loc := e.putChunked("/free/big", body)
			r.want(t, "chunked PUT of 200,000 bytes, chunked_reserve 64 KiB", 201, "")
			if (mode == DataRedirect) != (loc != "") || strings.Contains(loc, "max=") {
				t.Errorf("redirected to %q: want a 307 in redirect mode only, its URL unbounded", loc)
			}
			if g := e.get("/free/big", nil); g.status != 200 || !bytes.Equal([]byte(g.body), body) {
				t.Errorf("GET: %d, %d bytes; want 200 and the 200,000 bytes sent", g.status, len(g.body))
			}
		})
	}
	// local: md writes its own data server's store (`shoal all`), where
	// the body over max_put_body once got 400 (its limit's error taken
	// for a broken body).
	for _, c := range []struct {
		mode  string
		local bool
	}{{DataRedirect, false}, {DataProxy, false}, {DataAuto, true}, {DataProxy, true}} {
		t.Run(fmt.Sprintf("%s/local=%v/max_put_body", c.mode, c.local), func(t *testing.T) {
			e := newEnvLocal(t, c.mode, c.local, func(o *Options) { o.ChunkedReserve, o.MaxPutBody = 64<<10, 150_000 })
			e.do("MKCOL", "/free", nil, nil).want(t, "MKCOL", 201, "")
			r, _ := e.putChunked("/free/over", body)
			r.want(t, "chunked PUT past max_put_body", 413, "150000") // the reason names the limit
			e.do("HEAD", "/free/over", nil, nil).want(t, "HEAD of the refused PUT", 404, "")
			r, loc := e.putChunked("/free/within", body[:100_000])
			r.want(t, "chunked PUT past chunked_reserve, within max_put_body", 201, "")
			if c.mode == DataRedirect && !strings.Contains(loc, "max=150000") {
				t.Errorf("redirected to %q, want the bound of max_put_body (max=150000)", loc)
			}
		})
	}
}
