package md

import (
	"context"
	"testing"

	"shoal"
)

// panickyCatalog is md's catalog with a bug: a stat of /boom panics.
type panickyCatalog struct{ shoal.Catalog }

func (c panickyCatalog) Stat(ctx context.Context, path string) (*shoal.Entry, error) {
	if path == "/boom" {
		panic("a bug in the catalog")
	}
	return c.Catalog.Stat(ctx, path)
}

// TestPanicIsOneRequest: a request that meets a bug (here a catalog that
// panics) gets 500, and md answers the next ones; fasthttp alone would
// have ended md (and in shoal all, the data server with it).
func TestPanicIsOneRequest(t *testing.T) {
	e := newEnv(t, DataRedirect, func(o *Options) { o.Catalog = panickyCatalog{o.Catalog} })
	if r := e.do("HEAD", "/boom", nil, nil); r.status != 500 {
		t.Errorf("HEAD of the path that panics: %d, want 500", r.status)
	}
	if r := e.put("/f", []byte("still here")); r.status != 201 {
		t.Fatalf("PUT after the panic: %d %s", r.status, r.body)
	}
	if r := e.get("/f", nil); r.status != 200 || r.body != "still here" {
		t.Errorf("GET after the panic: %d %q", r.status, r.body)
	}
}
