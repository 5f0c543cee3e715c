package token

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"shoal"
	"shoal/internal/testissuer"
)

// FuzzVerify feeds untrusted bytes to the full token check (a verifier
// whose keys come from a JWKS file, so no network): it must never panic,
// and whatever it accepts must be a well-formed principal.
func FuzzVerify(f *testing.F) {
	is := testissuer.New(f)
	file := filepath.Join(f.TempDir(), "jwks.json")
	if err := os.WriteFile(file, is.JWKS(), 0o644); err != nil {
		f.Fatal(err)
	}
	v, err := New(Config{Issuers: []IssuerConfig{{URL: is.URL, JWKSFile: file, BasePath: "/base"}}, Audiences: []string{testAud}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(is.Mint(f, is.WLCG("alice", testAud, "storage.read:/ storage.create:/x"))))
	f.Add([]byte(is.Mint(f, is.SciToken("bob", "ANY", "read write:/y"))))
	f.Add([]byte(is.MintNone(f, is.SigningKid(), is.WLCG("alice", testAud, "storage.modify:/"))))
	f.Fuzz(func(t *testing.T, raw []byte) {
		p, err := v.Verify(context.Background(), raw)
		if err != nil {
			if k := shoal.KindOf(err); k != shoal.KindUnauthorized && k != shoal.KindUnavailable {
				t.Fatalf("error of kind %v: %v", k, err)
			}
			return
		}
		if p.Kind != shoal.PrincipalToken || p.Issuer != is.URL || p.Name == "" {
			t.Fatalf("accepted principal %+v", p)
		}
		for _, s := range p.Scopes {
			if !shoal.IsWithin(s.Path, "/base") || s.Rights == 0 {
				t.Fatalf("scope %+v escapes the base path", s)
			}
		}
	})
}

// FuzzParseScopes: any scope claim either fails or yields clean absolute
// paths under the base path, without dot segments.
func FuzzParseScopes(f *testing.F) {
	for _, s := range []string{
		"storage.read:/ storage.create:/foo", "storage.read", "storage.modify:", "read write:/x",
		"storage.read:/a/../b", "storage.stage://a//b/", "openid offline_access", "storage.read:/\x00",
	} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, claim string, sci bool) {
		profile := ProfileWLCG
		if sci {
			profile = ProfileSciTokens
		}
		scopes, err := parseScopes(claim, profile, "/vo")
		if err != nil {
			return
		}
		for _, s := range scopes {
			if !shoal.IsWithin(s.Path, "/vo") || strings.Contains(s.Path, "//") ||
				strings.HasSuffix(s.Path, "/") || strings.Contains(s.Path+"/", "/../") || strings.Contains(s.Path+"/", "/./") {
				t.Fatalf("claim %q: scope path %q", claim, s.Path)
			}
		}
	})
}
