package md

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"shoal"
)

// panickyCatalog is md's catalog with bugs: a stat of /boom panics, and so
// does the second page of a listing of /boomdir (read while md streams the
// answer, after its handler has returned).
type panickyCatalog struct{ shoal.Catalog }

func (c panickyCatalog) Stat(ctx context.Context, path string) (*shoal.Entry, error) {
	if path == "/boom" {
		panic("a bug in the catalog")
	}
	return c.Catalog.Stat(ctx, path)
}

func (c panickyCatalog) ListPage(ctx context.Context, dir, after string, limit int, props bool) (shoal.Page, error) {
	if dir == "/boomdir" && after != "" {
		panic("a bug in the catalog's listing")
	}
	return c.Catalog.ListPage(ctx, dir, after, limit, props)
}

// TestPanicIsOneRequest: a request that meets a bug (here a catalog that
// panics) gets 500 and its access line, and md answers the next ones;
// fasthttp alone would have ended md (and in shoal all, the data server
// with it). A bug met while a listing streams cuts that answer short, so
// that no client takes it for whole, and md goes on.
func TestPanicIsOneRequest(t *testing.T) {
	logs := &syncBuffer{}
	e := newEnv(t, DataRedirect, func(o *Options) {
		o.Catalog = panickyCatalog{o.Catalog}
		o.AccessLog = slog.New(slog.NewTextHandler(logs, nil))
	})
	if r := e.do("HEAD", "/boom", nil, nil); r.status != 500 {
		t.Errorf("HEAD of the path that panics: %d, want 500", r.status)
	}
	if l := logs.String(); !strings.Contains(l, "method=HEAD path=/boom status=500") {
		t.Errorf("no access line for the request that panicked:\n%s", l)
	}

	ctx := context.Background()
	e.db.Mkdir(ctx, "/boomdir", time.Now())
	var names []string
	for i := range listPageSize + 10 {
		names = append(names, fmt.Sprintf("f%05d", i))
	}
	if err := e.db.CreateFiles(ctx, "/boomdir", names, 0); err != nil {
		t.Fatal(err)
	}
	// Cut short: at the headers or after some of the body (the panic may
	// close the connection before fasthttp has sent what came before it),
	// never with the multistatus closed.
	req, _ := http.NewRequest("PROPFIND", e.url+"/boomdir", nil)
	req.Header.Set("Depth", "1")
	if res, err := e.http.Do(req); err == nil {
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 207 || err == nil || strings.Contains(string(body), "</D:multistatus>") {
			t.Errorf("listing that panics on its second page: status %d, read error %v, %d bytes; want 207 and the answer cut", res.StatusCode, err, len(body))
		}
	}

	if r := e.put("/f", []byte("still here")); r.status != 201 {
		t.Fatalf("PUT after the panics: %d %s", r.status, r.body)
	}
	if r := e.get("/f", nil); r.status != 200 || r.body != "still here" {
		t.Errorf("GET after the panics: %d %q", r.status, r.body)
	}
}
