package rules

import (
	"strings"
	"testing"

	"shoal"
)

func TestCompileErrors(t *testing.T) {
	for _, tc := range []struct {
		rule Rule
		want string
	}{
		{Rule{Path: "pub", Who: "anonymous", Rights: []string{"read"}}, `auth.rules[0]: path "pub": must be absolute`},
		{Rule{Path: "/a/../b", Who: "anonymous", Rights: []string{"read"}}, `".." segments`},
		{Rule{Path: "/", Who: "everyone", Rights: []string{"read"}}, `who "everyone": want anonymous, authenticated, user:NAME, group:NAME or issuer:URL`},
		{Rule{Path: "/", Who: "user:", Rights: []string{"read"}}, `who "user:"`},
		{Rule{Path: "/", Who: "issuer:iam", Rights: []string{"read"}}, "issuer must be a URL"},
		{Rule{Path: "/", Who: "anonymous", Rights: []string{"write"}}, `right "write": want read, create or modify`},
		{Rule{Path: "/", Who: "anonymous"}, "no rights"},
	} {
		if _, err := Compile([]Rule{tc.rule}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err %v, want %q", tc.rule, err, tc.want)
		}
	}
}

func TestRights(t *testing.T) {
	rs, err := Compile([]Rule{
		{Path: "/", Who: "authenticated", Rights: []string{"read"}},
		{Path: "//data//", Who: "user:alice", Rights: []string{"create, modify"}},
		{Path: "/data/cms", Who: "group:/cms", Rights: []string{"read", "create"}},
		{Path: "/pub", Who: "anonymous", Rights: []string{"read"}},
		{Path: "/in", Who: "issuer:https://iam.example.org", Rights: []string{"create"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	alice := &shoal.Principal{Kind: shoal.PrincipalUser, ID: "user:alice", Name: "alice"}
	aliceTok := &shoal.Principal{Kind: shoal.PrincipalToken, Name: "alice", Issuer: "https://iam.example.org", Groups: []string{"/cms"}}
	for _, tc := range []struct {
		p    *shoal.Principal
		path string
		want shoal.Rights
	}{
		{alice, "/data/x", shoal.RightRead | shoal.RightCreate | shoal.RightModify},
		{alice, "/data", shoal.RightsAll},
		{alice, "/database", shoal.RightRead},
		{alice, "/data/cms/x", shoal.RightsAll},
		{aliceTok, "/data/x", shoal.RightRead}, // user: rules are for local users only
		{aliceTok, "/data/cms/y", shoal.RightRead | shoal.RightCreate},
		{aliceTok, "/in/z", shoal.RightRead | shoal.RightCreate},
		{shoal.Anonymous, "/pub/x", shoal.RightRead},
		{shoal.Anonymous, "/data/x", shoal.RightsNone},
		{alice, "/pub/x", shoal.RightRead}, // from authenticated, not from the anonymous rule
	} {
		if got := rs.Rights(tc.p, tc.path); got != tc.want {
			t.Errorf("%s on %s: %v, want %v", tc.p.ID+tc.p.Name, tc.path, got, tc.want)
		}
	}
	if rs.AnonymousRights() != shoal.RightRead || OpenAccess().AnonymousRights() != shoal.RightsAll || (&Rules{}).Rights(shoal.Anonymous, "/") != 0 {
		t.Fatal("anonymous rights")
	}
}
