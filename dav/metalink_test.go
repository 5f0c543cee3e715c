package dav

import "testing"

// FuzzAcceptsMetalink: any Accept header either asks for a Metalink or
// not, without panicking; the answer does not depend on the case of the
// media type, and a q of 0 refuses it.
func FuzzAcceptsMetalink(f *testing.F) {
	for _, s := range []string{
		"application/metalink4+xml", "application/metalink4+xml;q=0", "*/*", "text/html, application/metalink4+xml;q=0.5",
		"Application/Metalink4+XML", "application/metalink+xml", ",,;", "application/metalink4+xml ; q=0.000",
		"application/metalink4+xml;q=", "application/metalink4+xml;q=1.5", "\x00;q=\xff",
		"application/metalin\u212a4+xml", // the Kelvin sign folds to k in Unicode, not in HTTP
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		got := AcceptsMetalink([]byte(h))
		upper := AcceptsMetalink([]byte(asciiUpper(h)))
		if got != upper {
			t.Fatalf("%q: %v, upper-cased %v", h, got, upper)
		}
		if got && !containsFold(h, ContentTypeMetalink) {
			t.Fatalf("%q accepted without naming %s", h, ContentTypeMetalink)
		}
	})
}

func asciiUpper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

func containsFold(s, sub string) bool {
	return len(sub) == 0 || indexString([]byte(asciiUpper(s)), asciiUpper(sub)) >= 0
}

func TestAcceptsMetalink(t *testing.T) {
	for h, want := range map[string]bool{
		"application/metalink4+xml":                  true,
		"text/html, application/metalink4+xml;q=0.5": true,
		" APPLICATION/METALINK4+XML ":                true,
		"application/metalink4+xml;q=0":              false,
		"application/metalink4+xml;q=0.000":          false,
		"*/*":                                        false,
		"application/*":                              false,
		"application/metalink+xml":                   false,
		"":                                           false,
	} {
		if got := AcceptsMetalink([]byte(h)); got != want {
			t.Errorf("AcceptsMetalink(%q) = %v, want %v", h, got, want)
		}
	}
}
