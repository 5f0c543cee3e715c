package md

import (
	"context"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"shoal/cache"
	"shoal/catalog"
	"shoal/sign"
)

// benchServer is md over a SQLite catalog behind the cache's in-process
// tier, with one file and its entry already cached.
func benchServer(b *testing.B, tweak ...func(*Options)) *Server {
	ctx := context.Background()
	db, err := catalog.Open(ctx, catalog.Options{DSN: "sqlite:" + filepath.Join(b.TempDir(), "c.db")})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	cat := cache.NewCatalog(db, cache.Options{L1: true})
	opts := Options{Catalog: cat, Keys: sign.Random()}
	for _, f := range tweak {
		f(&opts)
	}
	s, err := New(opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	if _, err := cat.Mkdir(ctx, "/data", time.Now()); err != nil {
		b.Fatal(err)
	}
	return s
}

func benchRun(b *testing.B, s *Server, method string, hdr map[string]string) {
	benchRunBody(b, s, method, hdr, "")
}

func benchRunBody(b *testing.B, s *Server, method string, hdr map[string]string, body string) {
	var ctx fasthttp.RequestCtx
	// as a server would: ctx is a context.Context; a client on loopback
	ctx.Init(&fasthttp.Request{}, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}, nil)
	h := s.Handler()
	setup := func() {
		ctx.Request.Reset()
		ctx.Response.Reset()
		ctx.Request.Header.SetMethod(method)
		ctx.Request.SetRequestURI("/data/file.txt")
		for k, v := range hdr {
			ctx.Request.Header.Set(k, v)
		}
		ctx.Request.SetBodyString(body)
		ctx.Request.Header.SetContentLength(len(body))
	}
	// the file, stored inline, and a first request to fill the cache
	ctx.Request.Header.SetMethod("PUT")
	ctx.Request.SetRequestURI("/data/file.txt")
	ctx.Request.SetBodyString("hello, shoal")
	if a := hdr["Authorization"]; a != "" {
		ctx.Request.Header.Set("Authorization", a)
	}
	h(&ctx)
	if ctx.Response.StatusCode() != 201 {
		b.Fatalf("PUT: %d %s", ctx.Response.StatusCode(), ctx.Response.Body())
	}
	setup()
	h(&ctx)
	want := 200
	if method == "PROPFIND" {
		want = 207
	}
	if ctx.Response.StatusCode() != want {
		b.Fatalf("%s: %d %s", method, ctx.Response.StatusCode(), ctx.Response.Body())
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		ctx.Response.Reset()
		if body != "" {
			ctx.Request.SetBodyString(body)
			ctx.Request.Header.SetContentLength(len(body))
		}
		h(&ctx)
	}
	if ctx.Response.StatusCode() != want {
		b.Fatalf("%s: %d", method, ctx.Response.StatusCode())
	}
}

// BenchmarkHEAD is the stat hot path: HEAD on a cached file, called on
// the handler directly (no network).
func BenchmarkHEAD(b *testing.B) {
	benchRun(b, benchServer(b), "HEAD", nil)
}

// BenchmarkHEADWantDigest adds a checksum request.
func BenchmarkHEADWantDigest(b *testing.B) {
	benchRun(b, benchServer(b), "HEAD", map[string]string{"Want-Digest": "adler32, md5;q=0.5"})
}

// BenchmarkPROPFINDDepth0 is an allprop PROPFIND (no body) on a cached file.
func BenchmarkPROPFINDDepth0(b *testing.B) {
	benchRun(b, benchServer(b), "PROPFIND", map[string]string{"Depth": "0"})
}

// BenchmarkPROPFINDDepth0Props asks for named live properties, as grid
// clients and file managers do; it needs no dead-property query.
func BenchmarkPROPFINDDepth0Props(b *testing.B) {
	benchRunBody(b, benchServer(b), "PROPFIND", map[string]string{"Depth": "0"},
		`<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:resourcetype/><D:getcontentlength/><D:getlastmodified/><D:getetag/></D:prop></D:propfind>`)
}

// BenchmarkPROPFINDDepth0Allprop sends an allprop body, as gfal2 and
// many file managers do.
func BenchmarkPROPFINDDepth0Allprop(b *testing.B) {
	benchRunBody(b, benchServer(b), "PROPFIND", map[string]string{"Depth": "0"},
		`<?xml version="1.0" encoding="utf-8" ?><D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind>`)
}

// BenchmarkPROPFINDDepth0Davix sends davix's property list (see
// davixBody): named live properties, a quota one, and dead LCGDM ones.
func BenchmarkPROPFINDDepth0Davix(b *testing.B) {
	benchRunBody(b, benchServer(b), "PROPFIND", map[string]string{"Depth": "0"}, davixBody)
}
