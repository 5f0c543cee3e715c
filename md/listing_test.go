package md

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"shoal"
)

// pageCounter is the real catalog, counting the pages listings read.
type pageCounter struct {
	shoal.Catalog
	pages atomic.Int64
}

func (p *pageCounter) ListPage(ctx context.Context, dir, after string, limit int, props bool) (shoal.Page, error) {
	p.pages.Add(1)
	return p.Catalog.ListPage(ctx, dir, after, limit, props)
}

// davixBody is the PROPFIND body davix (and so gfal2) sends for stat and
// listing (davix 0.8, src/fileops/davmeta.cpp's propfind request).
const davixBody = `<?xml version="1.0" encoding="utf-8" ?><D:propfind xmlns:D="DAV:" xmlns:L="LCGDM:"><D:prop><D:displayname/><D:getlastmodified/><D:creationdate/><D:getcontentlength/><D:quota-used-bytes/><D:resourcetype><D:collection/></D:resourcetype><L:mode/><D:owner></D:owner><D:group></D:group></D:prop></D:propfind>`

// TestStreamedListing: a collection of several catalog pages is listed
// by PROPFIND Depth 1 and by GET as a stream (chunked, no Content-Length),
// every child once, in order, with its dead properties (read per page),
// as well-formed XML and HTML; a small collection is answered whole.
func TestStreamedListing(t *testing.T) {
	var pc *pageCounter
	e := newEnv(t, DataProxy, func(o *Options) { pc = &pageCounter{Catalog: o.Catalog}; o.Catalog = pc })
	ctx := context.Background()
	const n = 2*listPageSize + 100
	if _, err := e.db.Mkdir(ctx, "/big", time.Now()); err != nil {
		t.Fatal(err)
	}
	var names []string
	for i := range n - 1 {
		names = append(names, fmt.Sprintf("f%05d <&>", i))
	}
	if err := e.db.CreateFiles(ctx, "/big", names, 3); err != nil {
		t.Fatal(err)
	}
	e.do("MKCOL", "/big/zdir", nil, nil).want(t, "MKCOL", 201, "")
	names = append(names, "zdir")
	e.do("PROPPATCH", "/big/f00600%20%3C&%3E", nil, []byte(`<D:propertyupdate xmlns:D="DAV:" xmlns:L="LCGDM:"><D:set><D:prop><L:mode>0644</L:mode></D:prop></D:set></D:propertyupdate>`)).want(t, "PROPPATCH", 207, "")

	for _, body := range []string{davixBody, ""} {
		before := pc.pages.Load()
		req, _ := http.NewRequest("PROPFIND", e.url+"/big", strings.NewReader(body))
		req.Header.Set("Depth", "1")
		res, err := e.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != 207 || res.ContentLength != -1 || len(res.TransferEncoding) == 0 {
			t.Fatalf("PROPFIND Depth 1 of %d: status %d, Content-Length %d, Transfer-Encoding %v; want 207 streamed", n, res.StatusCode, res.ContentLength, res.TransferEncoding)
		}
		var sb strings.Builder
		if _, err := bufio.NewReader(res.Body).WriteTo(&sb); err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		ms := parseMS(t, sb.String())
		if len(ms.Responses) != n+1 || ms.Responses[0].Href != "/big/" {
			t.Fatalf("body %q: %d responses, want %d, the collection first", body, len(ms.Responses), n+1)
		}
		for i, name := range names {
			want := "/big/" + strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(name, " ", "%20"), "<", "%3C"), ">", "%3E")
			want = strings.ReplaceAll(want, "&", "%26")
			if name == "zdir" {
				want += "/"
			}
			if got := ms.Responses[i+1].Href; got != want {
				t.Fatalf("response %d: href %q, want %q", i+1, got, want)
			}
		}
		found, _ := ms.props(601)
		if body != "" && found["LCGDM: mode"] != "0644" {
			t.Errorf("davix body: the dead property of f00600 = %q (props %v), want 0644", found["LCGDM: mode"], found)
		}
		if found["DAV: getcontentlength"] != "3" {
			t.Errorf("getcontentlength of a listed inline file = %q, want 3", found["DAV: getcontentlength"])
		}
		if got := pc.pages.Load() - before; got != 3 {
			t.Errorf("the listing read %d pages, want 3", got)
		}
	}

	r := e.do("GET", "/big", nil, nil)
	if r.status != 200 || r.h.Get("Content-Length") != "" || strings.Count(r.body, "<li>") != n+1 || !strings.HasSuffix(r.body, "</html>\n") {
		t.Fatalf("GET /big: status %d, Content-Length %q, %d rows (want %d), ends %q", r.status, r.h.Get("Content-Length"), strings.Count(r.body, "<li>"), n+1, r.body[max(0, len(r.body)-40):])
	}
	if !strings.Contains(r.body, `<a href="/big/f00007%20%3C%26%3E">f00007 &lt;&amp;&gt;</a>`) || !strings.Contains(r.body, `<a href="/big/zdir/">zdir/</a>`) {
		t.Errorf("GET /big: rows not escaped as expected:\n%s", r.body[:500])
	}

	// One page: answered whole, with its length.
	e.do("MKCOL", "/small", nil, nil)
	e.put("/small/a", []byte("x"))
	r = e.do("PROPFIND", "/small", map[string]string{"Depth": "1"}, nil)
	if r.status != 207 || r.h.Get("Content-Length") == "" || len(parseMS(t, r.body).Responses) != 2 {
		t.Errorf("PROPFIND of a small collection: %d, Content-Length %q", r.status, r.h.Get("Content-Length"))
	}
}

// TestListingCutShort: a catalog failure after the first page ends the
// streamed multistatus with a 507 response for the collection (RFC 4918
// 9.1), still well-formed.
func TestListingCutShort(t *testing.T) {
	var fc *failingPages
	e := newEnv(t, DataProxy, func(o *Options) { fc = &failingPages{Catalog: o.Catalog}; o.Catalog = fc })
	ctx := context.Background()
	e.db.Mkdir(ctx, "/big", time.Now())
	var names []string
	for i := range listPageSize + 10 {
		names = append(names, fmt.Sprintf("f%05d", i))
	}
	if err := e.db.CreateFiles(ctx, "/big", names, 0); err != nil {
		t.Fatal(err)
	}
	fc.failAfter.Store(1)
	r := e.do("PROPFIND", "/big", map[string]string{"Depth": "1"}, nil)
	ms := parseMS(t, r.body)
	last := ms.Responses[len(ms.Responses)-1]
	if r.status != 207 || len(ms.Responses) != listPageSize+2 || last.Href != "/big/" || !strings.Contains(r.body, "507 Insufficient Storage") {
		t.Errorf("cut listing: status %d, %d responses, last %q; body ends %q", r.status, len(ms.Responses), last.Href, r.body[max(0, len(r.body)-300):])
	}
}

// failingPages is the real catalog whose ListPage fails once failAfter
// pages were read (a catalog that went away in the middle of a listing).
type failingPages struct {
	shoal.Catalog
	failAfter atomic.Int64
	pages     atomic.Int64
}

func (f *failingPages) ListPage(ctx context.Context, dir, after string, limit int, props bool) (shoal.Page, error) {
	if n := f.failAfter.Load(); n > 0 && f.pages.Add(1) > n {
		return shoal.Page{}, shoal.Errorf("catalog.ListPage", shoal.KindUnavailable, "catalog went away")
	}
	return f.Catalog.ListPage(ctx, dir, after, limit, props)
}
