package auth

import (
	"context"
	"testing"

	"shoal/auth/rules"
)

// TestStats: authentications are counted by method and result, a refusal
// of a valid principal as denied.
func TestStats(t *testing.T) {
	f := newFixture(t, []rules.Rule{{Path: "/pub", Who: "anonymous", Rights: []string{"read"}}})
	ctx := context.Background()
	tok := f.bearer(t, f.is.WLCG("s", testAud, "storage.read:/foo"))
	p, _ := f.auth.Authenticate(ctx, tok, false)
	f.auth.Authorize(p, &Request{Method: "DELETE", Path: "/foo/x"})
	f.auth.Authenticate(ctx, []byte("Bearer a.b.c"), false)
	f.auth.Authenticate(ctx, basic("alice", "alice-pw"), true)
	f.auth.Authenticate(ctx, basic("alice", "nope"), true)
	f.auth.Authenticate(ctx, basic("alice", "alice-pw"), false) // in clear
	anon, _ := f.auth.Authenticate(ctx, nil, false)
	f.auth.Authorize(anon, &Request{Method: "HEAD", Path: "/pub/x"})
	f.auth.Authorize(anon, &Request{Method: "PUT", Path: "/pub/x"})
	want := Stats{
		{1, 0, 1}, // anonymous: ok, invalid, denied
		{1, 1, 1}, // bearer
		{1, 2, 0}, // basic
	}
	if got := f.auth.Stats(); got != want {
		t.Errorf("stats %v, want %v", got, want)
	}
}
