package shoal

import (
	"strings"
	"testing"
)

func TestCleanPath(t *testing.T) {
	long := strings.Repeat("a", MaxNameLen+1)
	deep := strings.Repeat("/abcdefgh", MaxPathLen/9+1)
	cases := []struct {
		raw, want string
		slash     bool
		kind      Kind // KindOther: no error
	}{
		{"/", "/", false, KindOther},
		{"/a/b", "/a/b", false, KindOther},
		{"/a/b/", "/a/b", true, KindOther},
		{"//a///b", "/a/b", false, KindOther},
		{"/a%20b", "/a b", false, KindOther},
		{"/%C3%A9t%C3%A9", "/été", false, KindOther},
		{"/a/../b", "", false, KindInvalid},
		{"/a/%2e%2e/b", "", false, KindInvalid},
		{"/a/%2E%2e", "", false, KindInvalid},
		{"/a/./b", "", false, KindInvalid},
		{"/..", "", false, KindInvalid},
		{"/a%00b", "", false, KindInvalid},
		{"/a\x00b", "", false, KindInvalid},
		{"/a%2fb", "", false, KindInvalid},
		{"/a%zz", "", false, KindInvalid},
		{"/a%4", "", false, KindInvalid},
		{"a/b", "", false, KindInvalid},
		{"", "", false, KindInvalid},
		{"/" + long, "", false, KindTooLarge},
		{"/%F0%9F%90%9F", "/\U0001F41F", false, KindOther},
		{"/\xc3\xa9", "/é", false, KindOther},
		{deep, "", false, KindURITooLong},
	}
	for _, c := range cases {
		got, slash, err := CleanPath(c.raw)
		if c.kind != KindOther {
			if KindOf(err) != c.kind {
				t.Errorf("CleanPath(%.40q) error %v, want kind %v", c.raw, err, c.kind)
			}
			continue
		}
		if err != nil || got != c.want || slash != c.slash {
			t.Errorf("CleanPath(%q) = %q, %v, %v; want %q, %v", c.raw, got, slash, err, c.want, c.slash)
		}
	}
}

func FuzzCleanPath(f *testing.F) {
	for _, s := range []string{"/", "/a/b/", "/a/%2e%2e", "//x//", "/a%00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		p, _, err := CleanPath(raw)
		if err != nil {
			return
		}
		if p[0] != '/' || (len(p) > 1 && p[len(p)-1] == '/') || strings.Contains(p, "//") {
			t.Fatalf("%q cleaned to unclean %q", raw, p)
		}
		for _, seg := range strings.Split(p[1:], "/") {
			if seg == ".." || seg == "." || len(seg) > MaxNameLen || strings.ContainsRune(seg, 0) {
				t.Fatalf("%q cleaned to unsafe %q", raw, p)
			}
		}
		for _, seg := range strings.Split(p[1:], "/") {
			if err := CheckName(seg); p != "/" && err != nil {
				t.Fatalf("%q cleaned to %q with a bad name: %v", raw, p, err)
			}
		}
		if again, _, err := CleanPath(EscapePath(p)); err != nil || again != p {
			t.Fatalf("escape round trip of %q: %q, %v", p, again, err)
		}
	})
}

// TestNamesThatBreakListings: names that are not valid UTF-8 or hold a
// control character or a noncharacter are refused (they made a directory's
// PROPFIND ill-formed XML for every client), escaped or raw.
func TestNamesThatBreakListings(t *testing.T) {
	for _, raw := range []string{
		"/%ff%fe", "/a%ff", "/\xff\xfe", // invalid UTF-8
		"/%c0%ae", "/%e0%80%ae", // overlong forms of '.'
		"/%ed%a0%80",                                               // a UTF-16 surrogate
		"/%ef%bf%be", "/%ef%bf%bf", "/x%ef%b7%90", "/%f0%9f%bf%be", // noncharacters
		"/a%7f", "/a%c2%85", "/a\x7f", "/a%1b", // DEL, C1 NEL, ESC
	} {
		if _, _, err := CleanPath(raw); !IsKind(err, KindInvalid) {
			t.Errorf("CleanPath(%q) = %v, want KindInvalid", raw, err)
		}
	}
}

func TestErrorKinds(t *testing.T) {
	inner := E("catalog.Stat", "/x", KindNotFound)
	outer := E("md.HEAD", inner)
	if KindOf(outer) != KindNotFound || outer.(*Error).Kind.Status() != 404 {
		t.Errorf("kind not inherited: %v", outer)
	}
	if !IsKind(outer, KindNotFound) || IsKind(nil, KindNotFound) {
		t.Error("IsKind")
	}
	if Reason(outer) != "not found" {
		t.Errorf("reason %q", Reason(outer))
	}
}

func TestParseLayout(t *testing.T) {
	for _, s := range []string{"replica:1", "replica:3", "ec:4+2", "ec:8+3"} {
		l, err := ParseLayout(s)
		if err != nil || l.String() != s {
			t.Errorf("ParseLayout(%q) = %v, %v", s, l, err)
		}
	}
	for _, s := range []string{"", "replica", "replica:0", "ec:4", "ec:0+1", "raid:5"} {
		if _, err := ParseLayout(s); !IsKind(err, KindInvalid) {
			t.Errorf("ParseLayout(%q) accepted", s)
		}
	}
}
