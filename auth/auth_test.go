package auth

import (
	"context"
	"encoding/base64"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"shoal"
	"shoal/auth/rules"
	"shoal/auth/token"
	"shoal/auth/users"
	"shoal/internal/testissuer"
)

const testAud = "https://shoal.example.org"

// fixture is an Auth with a real test issuer, a users file and rules.
type fixture struct {
	auth *Auth
	is   *testissuer.Issuer
}

func newFixture(t testing.TB, rs []rules.Rule) *fixture {
	t.Helper()
	is := testissuer.New(t)
	v, err := token.New(token.Config{Issuers: []token.IssuerConfig{{URL: is.URL}}, Audiences: []string{testAud}, RootCAs: is.Pool()})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "users")
	for _, u := range []struct {
		name, pass string
		groups     []string
	}{{"alice", "alice-pw", []string{"staff"}}, {"bob", "bob:pw with colon", nil}} {
		if _, err := users.Add(file, u.name, u.pass, u.groups, 4); err != nil {
			t.Fatal(err)
		}
	}
	us, err := users.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	compiled, err := rules.Compile(rs)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{auth: New(Config{Tokens: v, Users: us, Rules: compiled}), is: is}
}

func (f *fixture) bearer(t testing.TB, c testissuer.Claims) []byte {
	return []byte("Bearer " + f.is.Mint(t, c))
}

func basic(user, pass string) []byte {
	return []byte("Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass)))
}

func TestAuthenticate(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		header []byte
		secure bool
		want   string // principal ID, or "!" + substring of the error
	}{
		{"none", nil, false, "anonymous"},
		{"blank", []byte("  "), false, "anonymous"},
		{"bearer", f.bearer(t, f.is.WLCG("sub1", testAud, "storage.read:/")), false, "token:sub1@" + f.is.URL},
		{"bearer lower-case scheme", []byte("bearer " + f.is.Mint(t, f.is.WLCG("sub2", testAud, "storage.read:/"))), false, "token:sub2@" + f.is.URL},
		{"bad bearer", []byte("Bearer abc.def.ghi"), true, "!invalid token"},
		{"basic over TLS", basic("alice", "alice-pw"), true, "user:alice"},
		{"basic password with colon", basic("bob", "bob:pw with colon"), true, "user:bob"},
		{"basic in clear", basic("alice", "alice-pw"), false, "!needs https"},
		{"wrong password", basic("alice", "nope"), true, "!wrong user name or password"},
		{"unknown user", basic("mallory", "alice-pw"), true, "!wrong user name or password"},
		{"malformed basic", []byte("Basic !!!"), true, "!malformed"},
		{"other scheme", []byte("Negotiate abc"), true, "!unsupported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := f.auth.Authenticate(ctx, tc.header, tc.secure)
			if strings.HasPrefix(tc.want, "!") {
				if err == nil || !shoal.IsKind(err, shoal.KindUnauthorized) || !strings.Contains(err.Error(), tc.want[1:]) {
					t.Fatalf("got %v %v, want unauthorized %q", p, err, tc.want[1:])
				}
				return
			}
			if err != nil || p.ID != tc.want {
				t.Fatalf("got %v %v, want %s", p, err, tc.want)
			}
		})
	}
	// Nothing configured: credentials are refused with a reason.
	bare := New(Config{})
	if _, err := bare.Authenticate(ctx, basic("alice", "alice-pw"), true); err == nil || !strings.Contains(err.Error(), "no users file") {
		t.Fatalf("basic without users: %v", err)
	}
	if _, err := bare.Authenticate(ctx, []byte("Bearer x.y.z"), true); err == nil || !strings.Contains(err.Error(), "no issuer") {
		t.Fatalf("bearer without issuers: %v", err)
	}
}

func TestChallenges(t *testing.T) {
	f := newFixture(t, nil)
	_, badTok := f.auth.Authenticate(context.Background(), []byte("Bearer a.b.c"), true)
	for _, tc := range []struct {
		secure bool
		err    error
		want   []string
	}{
		{false, nil, []string{`Bearer realm="shoal"`}},
		{true, nil, []string{`Bearer realm="shoal"`, `Basic realm="shoal", charset="UTF-8"`}},
		{true, badTok, []string{`Bearer realm="shoal", error="invalid_token"`, `Basic realm="shoal", charset="UTF-8"`}},
		{false, badTok, []string{`Bearer realm="shoal", error="invalid_token"`}},
	} {
		if got := f.auth.Challenges(tc.secure, tc.err); !slices.Equal(got, tc.want) {
			t.Errorf("secure=%v err=%v: %q, want %q", tc.secure, tc.err, got, tc.want)
		}
	}
	if got := New(Config{}).Challenges(true, nil); !slices.Equal(got, []string{`Bearer realm="shoal"`}) {
		t.Errorf("no users: %q", got)
	}
	// No issuer configured: a bearer token is as invalid as a bad one.
	bare := New(Config{})
	_, noIssuer := bare.Authenticate(context.Background(), []byte("Bearer a.b.c"), true)
	if got := bare.Challenges(true, noIssuer); !slices.Equal(got, []string{`Bearer realm="shoal", error="invalid_token"`}) {
		t.Errorf("a token where no issuer is configured: %q", got)
	}
}
