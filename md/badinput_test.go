package md

import (
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"shoal/sign"
)

// TestBadInput sends what contract 5 names and checks each gets its
// precise status and reason and changes nothing.
func TestBadInput(t *testing.T) {
	e := newEnv(t, DataAuto)
	e.do("MKCOL", "/d", nil, nil).want(t, "MKCOL", 201, "")
	e.put("/d/f", []byte("content")).want(t, "PUT", 201, "")
	e.do("PROPPATCH", "/d/f", nil, []byte(`<D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><x xmlns="urn:x">1</x></D:prop></D:set></D:propertyupdate>`)).want(t, "PROPPATCH", 207, "")
	before := e.snapshot()

	longName := "/d/" + strings.Repeat("n", 256)
	longPath := strings.Repeat("/abcdefghijklmno", 260) // 4160 bytes
	cases := []struct {
		method, path string
		hdr          map[string]string
		body         string
		status       int
		reason       string
	}{
		{"GET", "/d/../d/f", nil, "", 400, `".."`},
		{"PUT", "/d/%2e%2e/x", nil, "x", 400, `".."`},
		{"PUT", "/d/%2E%2E/x", nil, "x", 400, `".."`},
		{"DELETE", "/d/./f", nil, "", 400, `"."`},
		{"PUT", "/d/a%00b", nil, "x", 400, "control character"},
		{"MKCOL", "/d/a%2fb", nil, "", 400, "encoded '/'"},
		{"PUT", "/d/bad%zzescape", nil, "x", 400, "percent-escape"},
		{"PUT", longName, nil, "x", 413, "name longer"},
		{"MKCOL", longPath, nil, "", 414, "path longer"},
		{"PUT", "/.shoal/x", nil, "x", 403, "reserved"},
		{"PUT", "/nope/f", nil, "x", 409, "parent"},
		{"PUT", "/d/f", map[string]string{"Content-Range": "bytes 0-0/7"}, "x", 400, "partial"},
		{"PUT", "/d/new", map[string]string{"Content-Range": "bytes 0-0/*"}, "x", 400, "partial"},
		{"MKCOL", "/d", nil, "", 405, "exists"},
		{"PROPFIND", "/d", map[string]string{"Depth": "0"}, "<D:propfind xmlns:D='DAV:'><D:prop></D:propfind>", 400, "XML"},
		{"PROPFIND", "/d", map[string]string{"Depth": "one"}, "", 400, "Depth"},
		{"PROPFIND", "/d", nil, "", 403, "propfind-finite-depth"},
		{"COPY", "/d/f", map[string]string{"Destination": "/d/g", "Overwrite": "yes"}, "", 400, "Overwrite"},
		{"COPY", "/d/f", map[string]string{"Destination": "ftp:/x"}, "", 400, "Destination"},
		{"COPY", "/d/f", map[string]string{"Destination": e.url + "/d/%2e%2e/g"}, "", 400, `".."`},
		{"COPY", "/d/f", map[string]string{"Destination": "https://remote.example.org/f", "Credential": "gridsite"}, "", 400, "delegation"},
		{"COPY", "/d/g", map[string]string{"Source": "https://remote.example.org/f", "X-Number-Of-Streams": "1000"}, "", 400, "X-Number-Of-Streams"},
		{"GET", "/d/f", map[string]string{"Range": "bytes=10-20"}, "", 416, "range"},
		{"GET", "/d/f", map[string]string{"Range": "bytes=5-2"}, "", 400, "Range"},
		{"GET", "/d/f", map[string]string{"Range": "bytes=x-2"}, "", 400, "Range"},
		{"POST", "/d/f", nil, "x", 405, "POST"},
		{"POST", "/.shoal/commit", nil, `{"upload":"x"}`, 403, "permission denied"},
		{"BREW", "/d/f", nil, "", 405, "not supported"},
	}
	for _, c := range cases {
		var body []byte
		if c.body != "" {
			body = []byte(c.body)
		}
		what := fmt.Sprintf("%s %.40s", c.method, c.path)
		e.do(c.method, c.path, c.hdr, body).want(t, what, c.status, c.reason)
	}
	if after := e.snapshot(); after != before {
		t.Errorf("bad input changed the catalog:\nbefore\n%s\nafter\n%s", before, after)
	}
}

// TestSignatures checks the data server refuses tampered and expired URLs,
// and md's internal API refuses unsigned calls.
func TestSignatures(t *testing.T) {
	e := newEnv(t, DataRedirect)
	big := strings.Repeat("s", 10000)
	e.put("/f", []byte(big)).want(t, "PUT", 201, "")
	r := e.do("GET", "/f", nil, nil)
	r.want(t, "GET", 302, "")
	loc, err := url.Parse(r.h.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(loc.String(), e.dsURL) {
		t.Fatalf("redirected to %s, not the data server %s", loc, e.dsURL)
	}
	e.do("GET", loc.String(), nil, nil).want(t, "signed GET", 200, "")
	e.do("GET", loc.String(), map[string]string{"Authorization": "Bearer nonsense"}, nil).want(t, "signed GET with a stray credential", 200, "")
	q := loc.Query()
	sig := q.Get(sign.ParamSig)
	q.Set(sign.ParamSig, strings.Repeat("0", len(sig)))
	loc.RawQuery = q.Encode()
	before := e.snapshot()
	e.do("GET", loc.String(), nil, nil).want(t, "wrong signature", 403, "signature")

	// Expired: signed with our keys but in the past.
	obj := strings.TrimPrefix(loc.Path, "/obj/")
	old := e.keys.URL(e.dsURL, "GET", obj, "", time.Now().Add(-time.Minute))
	e.do("GET", old, nil, nil).want(t, "expired signature", 403, "expired")
	// A GET signature does not allow a PUT.
	e.do("PUT", old, nil, []byte("x")).want(t, "GET signature used for PUT", 403, "")
	// An unknown key id.
	q = loc.Query()
	q.Set(sign.ParamSig, sig)
	q.Set(sign.ParamKeyID, "nokey")
	q.Set(sign.ParamExpiry, strconv.FormatInt(time.Now().Add(time.Minute).Unix(), 10))
	loc.RawQuery = q.Encode()
	e.do("GET", loc.String(), nil, nil).want(t, "unknown key", 403, "")
	if e.snapshot() != before {
		t.Error("refused signatures changed something")
	}
	if r := e.get("/f", map[string]string{"Range": "bytes=10-19"}); r.status != http.StatusPartialContent || r.body != big[10:20] {
		t.Errorf("ranged GET through redirect: %d %q", r.status, r.body)
	}
}

func TestRanges(t *testing.T) {
	for _, mode := range []string{DataProxy, DataRedirect} {
		e := newEnv(t, mode)
		small := "0123456789"
		big := strings.Repeat("0123456789", 1000)
		e.put("/s", []byte(small))
		e.put("/b", []byte(big))
		for _, c := range []struct{ path, rng, want, cr string }{
			{"/s", "bytes=2-4", "234", "bytes 2-4/10"},
			{"/s", "bytes=7-", "789", "bytes 7-9/10"},
			{"/s", "bytes=-2", "89", "bytes 8-9/10"},
			{"/b", "bytes=9995-", "56789", "bytes 9995-9999/10000"},
			{"/b", "bytes=100-104", "01234", "bytes 100-104/10000"},
		} {
			r := e.get(c.path, map[string]string{"Range": c.rng})
			if r.status != 206 || r.body != c.want || r.h.Get("Content-Range") != c.cr {
				t.Errorf("%s %s %s: %d %q %q", mode, c.path, c.rng, r.status, r.body, r.h.Get("Content-Range"))
			}
		}
		e.get("/b", map[string]string{"Range": "bytes=20000-"}).want(t, mode+" unsatisfiable big", 416, "")
		// Inline and data-server files answer bad and ignored Ranges alike.
		for _, c := range []struct{ path, want string }{{"/s", small}, {"/b", big}} {
			r := e.get(c.path, map[string]string{"Range": "bytes=20000-"})
			if r.status != 416 || r.h.Get("Content-Range") != fmt.Sprintf("bytes */%d", len(c.want)) {
				t.Errorf("%s %s unsatisfiable: %d, Content-Range %q", mode, c.path, r.status, r.h.Get("Content-Range"))
			}
			e.get(c.path, map[string]string{"Range": "bytes=5-2"}).want(t, mode+" "+c.path+" malformed", 400, "Range")
			e.get(c.path, map[string]string{"Range": "bytes=1-2-3"}).want(t, mode+" "+c.path+" malformed", 400, "Range")
			for _, rng := range []string{"items=0-1", "bytes=" + strings.Repeat("0-0,", 65)} {
				if r := e.get(c.path, map[string]string{"Range": rng}); r.status != 200 || r.body != c.want {
					t.Errorf("%s %s Range %.12q: %d with %d bytes, want 200 with all", mode, c.path, rng, r.status, len(r.body))
				}
			}
			// Several ranges: multipart/byteranges, parts in request order.
			r = e.get(c.path, map[string]string{"Range": "bytes=0-1, -2"})
			mt, params, err := mime.ParseMediaType(r.h.Get("Content-Type"))
			if r.status != 206 || err != nil || mt != "multipart/byteranges" {
				t.Errorf("%s %s multi-range: %d, Content-Type %q", mode, c.path, r.status, r.h.Get("Content-Type"))
				continue
			}
			mr := multipart.NewReader(strings.NewReader(r.body), params["boundary"])
			n := int64(len(c.want))
			for _, w := range [][2]int64{{0, 1}, {n - 2, n - 1}} {
				p, err := mr.NextPart()
				if err != nil {
					t.Fatalf("%s %s part %v: %v", mode, c.path, w, err)
				}
				got, _ := io.ReadAll(p)
				if cr := p.Header.Get("Content-Range"); cr != fmt.Sprintf("bytes %d-%d/%d", w[0], w[1], n) || string(got) != c.want[w[0]:w[1]+1] {
					t.Errorf("%s %s part: Content-Range %q, body %q", mode, c.path, cr, got)
				}
			}
		}
	}
}
