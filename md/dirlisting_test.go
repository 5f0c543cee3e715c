package md

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestDirListingNeverNotModified: a collection's ETag and date do not
// change when its children do, so its HTML listing is sent whatever
// If-None-Match or If-Modified-Since say (a 304 kept a browser's listing
// stale), with Cache-Control: no-cache; a file still gets its 304.
func TestDirListingNeverNotModified(t *testing.T) {
	e := newEnv(t, DataProxy)
	e.do("MKCOL", "/d", nil, nil).want(t, "MKCOL", 201, "")
	first := e.get("/d/", nil)
	etag := first.h.Get("ETag")
	e.put("/d/new-child", []byte("x")).want(t, "PUT", 201, "")
	future := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
	for _, hdr := range []map[string]string{{"If-None-Match": etag}, {"If-Modified-Since": future}} {
		r := e.get("/d/", hdr)
		if r.status != 200 || !strings.Contains(r.body, "new-child") || r.h.Get("Cache-Control") != "no-cache" {
			t.Errorf("GET /d/ with %v: %d, Cache-Control %q, listing the new child %v", hdr, r.status, r.h.Get("Cache-Control"), strings.Contains(r.body, "new-child"))
		}
	}
	fe := e.get("/d/new-child", nil).h.Get("ETag")
	if r := e.get("/d/new-child", map[string]string{"If-None-Match": fe}); r.status != 304 {
		t.Errorf("GET of a file with its ETag in If-None-Match: %d, want 304", r.status)
	}
}
