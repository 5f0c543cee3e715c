package auth

import (
	"context"
	"testing"

	"shoal/auth/rules"
)

// The per-request cost md pays for a credential it has seen before:
// Authenticate (cache hit) plus Authorize of a stat. No signature check,
// no bcrypt, no allocation.
//
//	go test -run XXX -bench . -benchmem ./auth/

func BenchmarkCachedToken(b *testing.B) {
	f := newFixture(b, nil)
	c := f.is.WLCG("bench", testAud, "storage.read:/data storage.create:/data/in")
	c["wlcg.groups"] = []string{"/cms", "/cms/uscms"}
	h := f.bearer(b, c)
	benchAuth(b, f.auth, h, "/data/run1/file.root")
}

func BenchmarkCachedBasic(b *testing.B) {
	f := newFixture(b, []rules.Rule{{Path: "/home/alice", Who: "user:alice", Rights: []string{"read"}}})
	benchAuth(b, f.auth, basic("alice", "alice-pw"), "/home/alice/file")
}

func benchAuth(b *testing.B, a *Auth, header []byte, path string) {
	ctx := context.Background()
	r := &Request{Method: "HEAD", Path: path, Exists: true}
	p, err := a.Authenticate(ctx, header, true)
	if err != nil {
		b.Fatal(err)
	}
	if err := a.Authorize(p, r); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p, err := a.Authenticate(ctx, header, true)
		if err != nil || a.Authorize(p, r) != nil {
			b.Fatal("refused")
		}
	}
}
