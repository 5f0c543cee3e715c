package md

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"shoal/cache"
	"shoal/davlock"
)

const lockBody = `<?xml version="1.0" encoding="utf-8"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner>%s</D:owner></D:lockinfo>`

var lockTokenRE = regexp.MustCompile(`<(opaquelocktoken:[^>]+)>`)

// secondMD serves another md over e's catalog (its own cache in front),
// as a second replica behind a load balancer would.
func (e *env) secondMD(t *testing.T) string {
	m, err := New(Options{Catalog: cache.NewCatalog(e.db, cache.Options{L1: true}), Keys: e.keys, DataMode: DataProxy})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go m.Serve(ln)
	t.Cleanup(func() { m.Close() })
	return "http://" + ln.Addr().String()
}

// TestLocksAcrossReplicas: a lock taken through one md is enforced and
// shown by another at once, and an UNLOCK through the other frees it.
func TestLocksAcrossReplicas(t *testing.T) {
	e := newEnv(t, DataProxy)
	b := e.secondMD(t)
	e.put("/f", []byte("v1")).want(t, "PUT", 201, "")
	r := e.do("LOCK", "/f", map[string]string{"Timeout": "Second-600"}, []byte(fmt.Sprintf(lockBody, "ann")))
	r.want(t, "LOCK through A", 200, "")
	tok := lockTokenRE.FindStringSubmatch(r.h.Get("Lock-Token"))
	if tok == nil {
		t.Fatalf("no Lock-Token in %q", r.h.Get("Lock-Token"))
	}
	e.do("PUT", b+"/f", nil, []byte("v2")).want(t, "PUT through B without the token", 423, "locked")
	e.do("DELETE", b+"/f", nil, nil).want(t, "DELETE through B without the token", 423, "")
	e.do("PUT", b+"/f", map[string]string{"If": "(<" + tok[1] + ">)"}, []byte("v2")).want(t, "PUT through B with the token", 204, "")
	discover := []byte(`<D:propfind xmlns:D="DAV:"><D:prop><D:lockdiscovery/></D:prop></D:propfind>`)
	if p := e.do("PROPFIND", b+"/f", map[string]string{"Depth": "0"}, discover); !strings.Contains(p.body, tok[1]) {
		time.Sleep(davlock.CountTTL + 100*time.Millisecond) // B's count of locks may be a second old
		if p = e.do("PROPFIND", b+"/f", map[string]string{"Depth": "0"}, discover); !strings.Contains(p.body, tok[1]) {
			t.Errorf("B's lockdiscovery does not show A's lock:\n%s", p.body)
		}
	}
	e.do("UNLOCK", b+"/f", map[string]string{"Lock-Token": "<" + tok[1] + ">"}, nil).want(t, "UNLOCK through B", 204, "")
	e.do("PUT", "/f", nil, []byte("v3")).want(t, "PUT through A after UNLOCK", 204, "")
	if p := e.do("PROPFIND", "/", map[string]string{"Depth": "1"}, discover); strings.Contains(p.body, "opaquelocktoken") {
		t.Errorf("lockdiscovery still shows the lock after UNLOCK")
	}
}

// TestLocksWithoutBounds: the findings "unlimited locks per client, 1000
// KiB owners accepted, lock timeouts up to 7 days" — each is bounded now,
// refused with a reason, and a refusal leaves no lock behind.
func TestLocksWithoutBounds(t *testing.T) {
	e := newEnv(t, DataProxy, func(o *Options) { o.LocksPerPrincipal, o.LocksTotal = 3, 4 })
	for i := range 3 {
		e.put(fmt.Sprintf("/f%d", i), []byte("x"))
	}
	big := strings.Repeat("o", davlock.DefaultMaxOwner+1)
	e.do("LOCK", "/f0", nil, []byte(fmt.Sprintf(lockBody, big))).want(t, "LOCK with a 4 KiB+1 owner", 400, "owner")
	r := e.do("LOCK", "/f0", map[string]string{"Timeout": "Second-604800"}, []byte(fmt.Sprintf(lockBody, "ann")))
	r.want(t, "LOCK for 7 days", 200, "")
	if !strings.Contains(r.body, "<D:timeout>Second-3600</D:timeout>") {
		t.Errorf("a 7-day lock was granted for longer than an hour:\n%s", r.body)
	}
	r = e.do("LOCK", "/f1", map[string]string{"Timeout": "Infinite"}, []byte(fmt.Sprintf(lockBody, "ann")))
	if !strings.Contains(r.body, "<D:timeout>Second-3600</D:timeout>") {
		t.Errorf("an infinite lock was not capped at an hour:\n%s", r.body)
	}
	e.do("LOCK", "/f2", nil, []byte(fmt.Sprintf(lockBody, "ann"))).want(t, "third lock", 200, "")
	r = e.do("LOCK", "/", map[string]string{"Depth": "0"}, []byte(fmt.Sprintf(lockBody, "ann")))
	r.want(t, "fourth lock of one principal", 503, "locks")
	if r.h.Get("Retry-After") == "" {
		t.Errorf("503 without Retry-After")
	}
	if n, _ := e.db.CountLocks(context.Background(), time.Now()); n != 3 {
		t.Errorf("%d locks held after the refusals, want 3", n)
	}
	if r := e.do("LOCK", "/f0", nil, nil); r.status != http.StatusBadRequest {
		t.Errorf("refresh without If: %d", r.status)
	}
}
