package md

import (
	"bytes"
	"net/http"
	"testing"
	"time"
)

// TestIfRange: a Range with an If-Range is answered only while the
// If-Range names the file as it is — its strong ETag, or exactly its
// Last-Modified — and the whole file (200) is sent otherwise, so that a
// resumed download never splices two versions (the Range was answered
// whatever the If-Range said). md answers it for files it serves (kept
// in the catalog, local, proxied), and the data server it redirects to
// with the ETag and date md writes into the URL, which its answer carries
// as md's would.
func TestIfRange(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789"), 20_000)
	small := []byte("a file kept in the catalog")
	for _, c := range []struct {
		name string
		e    *env
		data []byte
	}{
		{"local", newEnvLocal(t, DataRedirect, true), big},
		{"proxy", newEnvLocal(t, DataProxy, false), big},
		{"inline", newEnvLocal(t, DataRedirect, false), small},
		{"redirect", newEnvLocal(t, DataRedirect, false), big}, // the data server learns them from md's URL
	} {
		t.Run(c.name, func(t *testing.T) {
			c.e.put("/f", c.data).want(t, "PUT", 201, "")
			h := c.e.do("HEAD", "/f", nil, nil).h
			etag, lm := h.Get("ETag"), h.Get("Last-Modified")
			if g := c.e.getHops("/f", nil); g.h.Get("ETag") != etag || g.h.Get("Last-Modified") != lm {
				t.Errorf("the answer's ETag %q and Last-Modified %q, md's %q and %q", g.h.Get("ETag"), g.h.Get("Last-Modified"), etag, lm)
			}
			old := time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)
			for _, tc := range []struct {
				ifRange string
				partial bool
			}{
				{etag, true},
				{`"1-99"`, false},
				{"W/" + etag, false},
				{lm, true},
				{old, false},
				{"not a validator", false},
			} {
				r := c.e.getHops("/f", map[string]string{"Range": "bytes=5-9", "If-Range": tc.ifRange})
				if tc.partial && (r.status != 206 || !bytes.Equal(r.body, c.data[5:10])) {
					t.Errorf("If-Range %s: %d, %d bytes; want 206 and bytes 5-9", tc.ifRange, r.status, len(r.body))
				}
				if !tc.partial && (r.status != 200 || !bytes.Equal(r.body, c.data)) {
					t.Errorf("If-Range %s: %d, %d bytes; want 200 and the whole file", tc.ifRange, r.status, len(r.body))
				}
			}
		})
	}
}
