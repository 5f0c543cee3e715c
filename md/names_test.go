package md

import (
	"context"
	"encoding/xml"
	"io"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"shoal"
)

// TestNamesThatBreakListings: a PUT or MKCOL of a name that is not valid
// UTF-8 or holds a noncharacter is 400 and changes nothing; a directory
// that already holds such a name (written by an older version, here
// straight into the catalog) still lists as well-formed XML and as valid
// UTF-8 HTML.
func TestNamesThatBreakListings(t *testing.T) {
	e := newEnv(t, DataAuto)
	e.do("MKCOL", "/d", nil, nil).want(t, "MKCOL", 201, "")
	before := e.snapshot()
	for _, name := range []string{"%ff%fe", "%c0%ae", "%ef%bf%be", "a%c2%85", "%ed%a0%80"} {
		e.do("PUT", "/d/"+name, nil, []byte("x")).want(t, "PUT "+name, 400, "")
		e.do("MKCOL", "/d/"+name, nil, nil).want(t, "MKCOL "+name, 400, "")
		e.do("COPY", "/d", map[string]string{"Destination": e.url + "/" + name}, nil).want(t, "COPY to "+name, 400, "")
	}
	if after := e.snapshot(); after != before {
		t.Fatalf("refused names changed the namespace:\n%s\n---\n%s", before, after)
	}

	ctx := context.Background()
	legacy := []string{"/d/\xff\xfe", "/d/\xef\xbf\xbe", "/d/ok-\x01-ctl", "/d/été"}
	for _, p := range legacy {
		if _, err := e.db.PutInline(ctx, p, []byte("old"), shoal.Sums{Adler32: 1}, time.Now(), shoal.Condition{}, time.Now()); err != nil {
			t.Fatalf("legacy name %q: %v", p, err)
		}
	}
	r := e.do("PROPFIND", "/d", map[string]string{"Depth": "1"}, nil)
	if r.status != 207 {
		t.Fatalf("PROPFIND: %d %s", r.status, r.body)
	}
	dec := xml.NewDecoder(strings.NewReader(r.body))
	hrefs, names := 0, 0
	var inName, inHref bool
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("PROPFIND Depth 1 of a directory with legacy names is not well-formed XML: %v\n%q", err, r.body)
		}
		switch v := tok.(type) {
		case xml.StartElement:
			inName, inHref = v.Name.Local == "displayname", v.Name.Local == "href"
		case xml.EndElement:
			inName, inHref = false, false
		case xml.CharData:
			if inName {
				names++
			}
			if inHref {
				hrefs++
			}
		}
	}
	if hrefs != len(legacy)+1 || names != len(legacy)+1 {
		t.Errorf("listing has %d hrefs and %d displaynames, want %d each", hrefs, names, len(legacy)+1)
	}
	if !strings.Contains(r.body, "<D:displayname>été</D:displayname>") {
		t.Errorf("a valid non-ASCII name was altered:\n%s", r.body)
	}
	page := e.get("/d/", nil)
	if page.status != 200 || !utf8.ValidString(page.body) {
		t.Errorf("HTML listing: %d, valid UTF-8 %v", page.status, utf8.ValidString(page.body))
	}
}
