package md

import (
	"net/http"
	"testing"
	"time"
)

// TestLostUpdates: If-Match, If-None-Match and If-Unmodified-Since are
// honoured on PUT, DELETE, MOVE, COPY and PROPPATCH (412, nothing
// changed), and If-None-Match / If-Modified-Since on GET and HEAD (304).
// The finding: If-Match: "nope" was ignored (201/204).
func TestLostUpdates(t *testing.T) {
	for _, mode := range []string{DataProxy, DataRedirect} {
		t.Run(mode, func(t *testing.T) {
			e := newEnv(t, mode)
			e.do("MKCOL", "/d", nil, nil).want(t, "MKCOL", 201, "")
			big := make([]byte, 10000) // on a data server, not inline
			e.put("/d/f", big).want(t, "PUT", 201, "")
			e.put("/d/small", []byte("x")).want(t, "PUT", 201, "")
			etag := e.do("HEAD", "/d/f", nil, nil).h.Get("ETag")
			past := time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)
			future := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
			prop := []byte(`<D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><x xmlns="urn:x">1</x></D:prop></D:set></D:propertyupdate>`)
			before := e.snapshot()
			nope := map[string]string{"If-Match": `"nope"`}
			for _, c := range []struct {
				method, path string
				hdr          map[string]string
				body         []byte
				status       int
			}{
				{"PUT", "/d/f", nope, big, 412},
				{"PUT", "/d/small", nope, []byte("y"), 412},
				{"PUT", "/d/new", map[string]string{"If-Match": "*"}, []byte("y"), 412},
				{"PUT", "/d/f", map[string]string{"If-Match": "W/" + etag}, big, 412}, // weak never matches strongly
				{"PUT", "/d/f", map[string]string{"If-None-Match": etag}, big, 412},
				{"PUT", "/d/f", map[string]string{"If-None-Match": "*"}, big, 412},
				{"PUT", "/d/f", map[string]string{"If-Unmodified-Since": past}, big, 412},
				{"PUT", "/d/f", map[string]string{"If-Match": `abc`}, big, 400},
				{"DELETE", "/d/f", nope, nil, 412},
				{"DELETE", "/d/f", map[string]string{"If-Unmodified-Since": past}, nil, 412},
				{"DELETE", "/d", map[string]string{"If-None-Match": "*"}, nil, 412},
				{"MOVE", "/d/f", map[string]string{"If-Match": `"nope"`, "Destination": e.url + "/d/g"}, nil, 412},
				{"COPY", "/d/f", map[string]string{"If-Match": `"nope"`, "Destination": e.url + "/d/g"}, nil, 412},
				{"PROPPATCH", "/d/f", nope, prop, 412},
				{"GET", "/d/f", nope, nil, 412},
			} {
				r := e.do(c.method, c.path, c.hdr, c.body)
				if r.status == http.StatusTemporaryRedirect {
					r = e.do(c.method, r.h.Get("Location"), nil, c.body)
				}
				r.want(t, c.method+" "+c.path+" "+mapString(c.hdr), c.status, "")
			}
			if after := e.snapshot(); after != before {
				t.Fatalf("refused conditional requests changed the namespace:\n%s\n---\n%s", before, after)
			}

			for _, m := range []string{"GET", "HEAD"} {
				for _, h := range []map[string]string{
					{"If-None-Match": etag}, {"If-None-Match": `"a", W/` + etag}, {"If-None-Match": "*"},
					{"If-Modified-Since": future},
				} {
					r := e.do(m, "/d/f", h, nil)
					if r.status != 304 || r.h.Get("ETag") != etag || r.body != "" {
						t.Errorf("%s %v: %d ETag %q body %d bytes; want 304 with the ETag", m, h, r.status, r.h.Get("ETag"), len(r.body))
					}
				}
				for _, h := range []map[string]string{{"If-None-Match": `"other"`}, {"If-Modified-Since": past}, {"If-Match": etag}} {
					if r := e.do(m, "/d/f", h, nil); r.status != 200 && r.status != 302 {
						t.Errorf("%s %v: %d, want 200 or 302", m, h, r.status)
					}
				}
			}

			// Matching validators let the write through.
			r := e.do("PUT", "/d/f", map[string]string{"If-Match": `"x", ` + etag}, big)
			if r.status == http.StatusTemporaryRedirect {
				r = e.do("PUT", r.h.Get("Location"), nil, big)
			}
			r.want(t, "PUT If-Match current", 204, "")
			etag2 := e.do("HEAD", "/d/f", nil, nil).h.Get("ETag")
			if etag2 == etag {
				t.Fatalf("ETag unchanged by an overwrite")
			}
			e.do("PROPPATCH", "/d/f", map[string]string{"If-Match": etag2}, prop).want(t, "PROPPATCH If-Match", 207, "")
			e.do("DELETE", "/d/f", map[string]string{"If-Match": etag2, "If-Unmodified-Since": past}, nil).want(t, "DELETE If-Match (wins over If-Unmodified-Since)", 204, "")
		})
	}
}

// TestIfMatchAtCommit: two redirected PUTs holding the same ETag are
// both let through by md; the second commit finds the file changed and
// fails with 412 instead of overwriting the first writer's version.
func TestIfMatchAtCommit(t *testing.T) {
	e := newEnv(t, DataRedirect)
	big := make([]byte, 10000)
	e.put("/f", big).want(t, "PUT", 201, "")
	etag := e.do("HEAD", "/f", nil, nil).h.Get("ETag")
	hdr := map[string]string{"If-Match": etag, "Expect": "100-continue"}
	r1 := e.do("PUT", "/f", hdr, big)
	r2 := e.do("PUT", "/f", hdr, big)
	if r1.status != 307 || r2.status != 307 {
		t.Fatalf("PUTs: %d, %d; want two 307s", r1.status, r2.status)
	}
	one := append([]byte("first"), big[5:]...) // the length md reserved, other bytes
	e.do("PUT", r1.h.Get("Location"), nil, one).want(t, "first writer", 204, "")
	e.do("PUT", r2.h.Get("Location"), nil, big).want(t, "second writer", 412, "")
	if got := e.get("/f", nil); got.body != string(one) {
		t.Errorf("the first writer's version was lost: %d bytes", len(got.body))
	}
}

func mapString(m map[string]string) string {
	s := ""
	for k, v := range m {
		s += k + ": " + v + "; "
	}
	return s
}
