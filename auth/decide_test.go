package auth

import (
	"context"
	"strings"
	"testing"

	"shoal"
	"shoal/auth/rules"
)

// TestDecisions is the method → right table for every kind of principal:
// token scopes (the WLCG compliance cases: path boundaries, create cannot
// overwrite or delete, modify implies create, read does not imply write,
// stage gives stat only), local users and group tokens through rules, and
// anonymous.
func TestDecisions(t *testing.T) {
	f := newFixture(t, nil)
	// The issuer rule needs the test issuer's URL: rebuild the rules.
	rs, err := rules.Compile([]rules.Rule{
		{Path: "/pub", Who: "anonymous", Rights: []string{"read"}},
		{Path: "/home/alice", Who: "user:alice", Rights: []string{"read,create,modify"}},
		{Path: "/staff", Who: "group:staff", Rights: []string{"read", "create"}},
		{Path: "/cms", Who: "group:/cms", Rights: []string{"read"}},
		{Path: "/shared", Who: "authenticated", Rights: []string{"read"}},
		{Path: "/scratch", Who: "issuer:" + f.is.URL, Rights: []string{"create"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	f.auth.rules = rs
	ctx := context.Background()
	principal := func(h []byte) *shoal.Principal {
		p, err := f.auth.Authenticate(ctx, h, true)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	tok := func(scope string, groups ...string) *shoal.Principal {
		c := f.is.WLCG("sub", testAud, scope)
		if len(groups) > 0 {
			c["wlcg.groups"] = groups
		}
		return principal([]byte("Bearer " + f.is.Mint(t, c)))
	}
	var (
		anon     = shoal.Anonymous
		read     = tok("storage.read:/foo")
		create   = tok("storage.create:/foo")
		modify   = tok("storage.modify:/foo")
		stage    = tok("storage.stage:/foo")
		deep     = tok("storage.create:/a/b/c")
		readCrt  = tok("storage.read:/foo storage.create:/bar")
		cmsGroup = tok("openid", "/cms")
		cmsCap   = tok("storage.read:/foo", "/cms")
		sciWrite = principal([]byte("Bearer " + f.is.Mint(t, f.is.SciToken("sci", testAud, "write:/foo"))))
		alice    = principal(basic("alice", "alice-pw"))
		bob      = principal(basic("bob", "bob:pw with colon"))
	)
	type req = Request
	const ok, e401, e403 = "", "401", "403"
	for _, tc := range []struct {
		name string
		p    *shoal.Principal
		r    req
		want string
	}{
		// Scope path boundaries.
		{"read /foo: GET /foo", read, req{Method: "GET", Path: "/foo"}, ok},
		{"read /foo: GET /foo/x", read, req{Method: "GET", Path: "/foo/x"}, ok},
		{"read /foo: GET /foobar", read, req{Method: "GET", Path: "/foobar"}, e403},
		{"read /foo: GET /", read, req{Method: "GET", Path: "/"}, e403},
		{"read /foo: HEAD /foo/x", read, req{Method: "HEAD", Path: "/foo/x", Exists: true}, ok},
		{"read /foo: list /foo", read, req{Method: "PROPFIND", Path: "/foo", Depth: 1}, ok},
		// Read does not imply write.
		{"read: PUT new", read, req{Method: "PUT", Path: "/foo/n"}, e403},
		{"read: MKCOL", read, req{Method: "MKCOL", Path: "/foo/d"}, e403},
		{"read: DELETE", read, req{Method: "DELETE", Path: "/foo/x", Exists: true}, e403},
		{"read: PROPPATCH", read, req{Method: "PROPPATCH", Path: "/foo/x", Exists: true}, e403},
		{"read: LOCK", read, req{Method: "LOCK", Path: "/foo/x"}, e403},
		// Create cannot overwrite or delete; it may stat, not read.
		{"create: PUT new", create, req{Method: "PUT", Path: "/foo/n"}, ok},
		{"create: PUT overwrite", create, req{Method: "PUT", Path: "/foo/x", Exists: true}, e403},
		{"create: DELETE", create, req{Method: "DELETE", Path: "/foo/x", Exists: true}, e403},
		{"create: MKCOL", create, req{Method: "MKCOL", Path: "/foo/d"}, ok},
		{"create: HEAD", create, req{Method: "HEAD", Path: "/foo/x", Exists: true}, ok},
		{"create: PROPFIND 0", create, req{Method: "PROPFIND", Path: "/foo/x", Exists: true}, ok},
		{"create: GET", create, req{Method: "GET", Path: "/foo/x", Exists: true}, e403},
		{"create: list", create, req{Method: "PROPFIND", Path: "/foo", Depth: 1, Exists: true}, e403},
		{"create: LOCK", create, req{Method: "LOCK", Path: "/foo/x"}, ok},
		{"create: PROPPATCH", create, req{Method: "PROPPATCH", Path: "/foo/x", Exists: true}, ok},
		{"create: PUT /foobar", create, req{Method: "PUT", Path: "/foobar"}, e403},
		{"create: MOVE to absent", create, req{Method: "MOVE", Path: "/foo/a", Exists: true, Destination: "/foo/b"}, ok},
		{"create: MOVE onto existing", create, req{Method: "MOVE", Path: "/foo/a", Exists: true, Destination: "/foo/b", DestExists: true}, e403},
		{"create: MOVE out of scope", create, req{Method: "MOVE", Path: "/foo/a", Exists: true, Destination: "/bar/a"}, e403},
		// Modify implies create.
		{"modify: PUT new", modify, req{Method: "PUT", Path: "/foo/n"}, ok},
		{"modify: PUT overwrite", modify, req{Method: "PUT", Path: "/foo/x", Exists: true}, ok},
		{"modify: DELETE", modify, req{Method: "DELETE", Path: "/foo/x", Exists: true}, ok},
		{"modify: MKCOL", modify, req{Method: "MKCOL", Path: "/foo/d"}, ok},
		{"modify: MOVE onto existing", modify, req{Method: "MOVE", Path: "/foo/a", Exists: true, Destination: "/foo/b", DestExists: true}, ok},
		{"modify: GET", modify, req{Method: "GET", Path: "/foo/x", Exists: true}, e403},
		{"modify: DELETE /foobar", modify, req{Method: "DELETE", Path: "/foobar", Exists: true}, e403},
		// SciTokens write is create and modify.
		{"scitokens write: PUT overwrite", sciWrite, req{Method: "PUT", Path: "/foo/x", Exists: true}, ok},
		{"scitokens write: GET", sciWrite, req{Method: "GET", Path: "/foo/x", Exists: true}, e403},
		// Stage gives stat only.
		{"stage: HEAD", stage, req{Method: "HEAD", Path: "/foo/x", Exists: true}, ok},
		{"stage: PROPFIND 0", stage, req{Method: "PROPFIND", Path: "/foo/x", Exists: true}, ok},
		{"stage: list", stage, req{Method: "PROPFIND", Path: "/foo", Depth: 1, Exists: true}, e403},
		{"stage: GET", stage, req{Method: "GET", Path: "/foo/x", Exists: true}, e403},
		{"stage: PUT", stage, req{Method: "PUT", Path: "/foo/n"}, e403},
		// MKCOL of the parents of a create scope path.
		{"create /a/b/c: MKCOL /a", deep, req{Method: "MKCOL", Path: "/a"}, ok},
		{"create /a/b/c: MKCOL /a/b", deep, req{Method: "MKCOL", Path: "/a/b"}, ok},
		{"create /a/b/c: MKCOL /a/b/c/d", deep, req{Method: "MKCOL", Path: "/a/b/c/d"}, ok},
		{"create /a/b/c: MKCOL /a/x", deep, req{Method: "MKCOL", Path: "/a/x"}, e403},
		{"create /a/b/c: PUT /a/f", deep, req{Method: "PUT", Path: "/a/f"}, e403},
		{"create /a/b/c: HEAD /a", deep, req{Method: "HEAD", Path: "/a", Exists: true}, e403},
		{"read /foo: MKCOL /", read, req{Method: "MKCOL", Path: "/"}, e403},
		// COPY: read on the source, create/modify on the target.
		{"copy read→create", readCrt, req{Method: "COPY", Path: "/foo/a", Exists: true, Destination: "/bar/a"}, ok},
		{"copy onto existing with create", readCrt, req{Method: "COPY", Path: "/foo/a", Exists: true, Destination: "/bar/a", DestExists: true}, e403},
		{"copy the wrong way", readCrt, req{Method: "COPY", Path: "/bar/a", Exists: true, Destination: "/foo/a"}, e403},
		{"tpc pull into create scope", create, req{Method: "COPY", Path: "/foo/n", TPC: TPCPull}, ok},
		{"tpc pull overwrite with create", create, req{Method: "COPY", Path: "/foo/x", Exists: true, TPC: TPCPull}, e403},
		{"tpc push with read", read, req{Method: "COPY", Path: "/foo/x", Exists: true, TPC: TPCPush}, ok},
		{"tpc push with create", create, req{Method: "COPY", Path: "/foo/x", Exists: true, TPC: TPCPush}, e403},
		// Anonymous and rules.
		{"anonymous GET /pub/x", anon, req{Method: "GET", Path: "/pub/x", Exists: true}, ok},
		{"anonymous list /pub", anon, req{Method: "PROPFIND", Path: "/pub", Depth: 1, Exists: true}, ok},
		{"anonymous PUT /pub/x", anon, req{Method: "PUT", Path: "/pub/x"}, e401},
		{"anonymous GET /publish", anon, req{Method: "GET", Path: "/publish"}, e401},
		{"anonymous HEAD /", anon, req{Method: "HEAD", Path: "/", Exists: true}, e401},
		{"anonymous OPTIONS", anon, req{Method: "OPTIONS", Path: "/"}, ok},
		{"anonymous unknown method", anon, req{Method: "FROB", Path: "/pub/x"}, e401},
		{"alice PUT in her home", alice, req{Method: "PUT", Path: "/home/alice/x", Exists: true}, ok},
		{"alice DELETE in her home", alice, req{Method: "DELETE", Path: "/home/alice/x", Exists: true}, ok},
		{"alice PUT in /home/alice2", alice, req{Method: "PUT", Path: "/home/alice2/x"}, e403},
		{"alice create in /staff (group)", alice, req{Method: "PUT", Path: "/staff/x"}, ok},
		{"alice overwrite in /staff (group: create only)", alice, req{Method: "PUT", Path: "/staff/x", Exists: true}, e403},
		{"bob in /staff", bob, req{Method: "PUT", Path: "/staff/x"}, e403},
		{"bob GET /pub (anonymous rule is not for users)", bob, req{Method: "GET", Path: "/pub/x"}, e403},
		{"bob GET /shared (authenticated)", bob, req{Method: "GET", Path: "/shared/x"}, ok},
		{"group token GET /cms/x", cmsGroup, req{Method: "GET", Path: "/cms/x"}, ok},
		{"group token PUT /cms/x", cmsGroup, req{Method: "PUT", Path: "/cms/x"}, e403},
		{"group token of the issuer: create /scratch", cmsGroup, req{Method: "PUT", Path: "/scratch/x"}, ok},
		{"group token GET /shared (authenticated)", cmsGroup, req{Method: "GET", Path: "/shared/x"}, ok},
		{"capability token: scopes only, not groups", cmsCap, req{Method: "GET", Path: "/cms/x"}, e403},
		{"capability token: not the issuer rule", cmsCap, req{Method: "PUT", Path: "/scratch/x"}, e403},
		{"capability token: not authenticated rules", cmsCap, req{Method: "GET", Path: "/shared/x"}, e403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := f.auth.Authorize(tc.p, &tc.r)
			got := ok
			if err != nil {
				got = "?"
				switch shoal.KindOf(err) {
				case shoal.KindUnauthorized:
					got = e401
				case shoal.KindPermission:
					got = e403
				}
			}
			if got != tc.want {
				t.Fatalf("got %q (%v), want %q", got, err, tc.want)
			}
			if err != nil {
				reason := shoal.Reason(err)
				if strings.Contains(reason, "\n") || !strings.Contains(reason, " needs ") {
					t.Fatalf("reason %q", reason)
				}
			}
		})
	}
}

func TestRefusalReason(t *testing.T) {
	f := newFixture(t, nil)
	tokP, err := f.auth.Authenticate(context.Background(), f.bearer(t, f.is.WLCG("s", testAud, "storage.read:/foo")), true)
	if err != nil {
		t.Fatal(err)
	}
	err = f.auth.Authorize(tokP, &Request{Method: "DELETE", Path: "/foo/x", Exists: true})
	if got, want := shoal.Reason(err), "permission denied: DELETE needs modify on /foo/x; the token has not"; got != want {
		t.Fatalf("reason %q, want %q", got, want)
	}
	err = f.auth.Authorize(shoal.Anonymous, &Request{Method: "HEAD", Path: "/x"})
	if got, want := shoal.Reason(err), "unauthorized: HEAD needs read, create or modify on /x; anonymous (no credentials) has not"; got != want {
		t.Fatalf("reason %q, want %q", got, want)
	}
	if err.(*shoal.Error).Kind.Status() != 401 {
		t.Fatal("anonymous refusal is not a 401")
	}
}

func TestAuthorizeDoesNotAllocate(t *testing.T) {
	f := newFixture(t, []rules.Rule{{Path: "/pub", Who: "anonymous", Rights: []string{"read"}}})
	p, err := f.auth.Authenticate(context.Background(), f.bearer(t, f.is.WLCG("s", testAud, "storage.read:/foo storage.create:/bar")), true)
	if err != nil {
		t.Fatal(err)
	}
	r := &Request{Method: "HEAD", Path: "/foo/some/file", Exists: true}
	anon := &Request{Method: "PROPFIND", Path: "/pub/x", Exists: true}
	if n := testing.AllocsPerRun(100, func() {
		if f.auth.Authorize(p, r) != nil || f.auth.Authorize(shoal.Anonymous, anon) != nil {
			t.Fatal("refused")
		}
	}); n != 0 {
		t.Fatalf("an allowed request allocates %.1f times", n)
	}
}
