package dav

import (
	"encoding/xml"
	"strings"
	"testing"
	"time"

	"shoal"
)

// Fuzz targets for every parser of untrusted input here. Their seed
// corpora (testdata/fuzz/<name>) replay in every `go test`; `make fuzz`
// runs each for a bounded time.

// FuzzParseIf: an If header parses into lists whose conditions each name
// a lock token or an entity tag, and whose tags are clean paths, or is
// refused as KindInvalid.
func FuzzParseIf(f *testing.F) {
	for _, s := range []string{"(<opaquelocktoken:a-b>)", `</d/f> (["1-2"] Not <urn:x>)`, `(Not ["x"]) (<t>)`,
		"<http://h/a> (<t>", "()", "(<>)", "<%zz> (<t>)", "\t(\t<t>\t)", `(["unterminated)`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		lists, err := ParseIf(h)
		if err != nil {
			if !shoal.IsKind(err, shoal.KindInvalid) || lists != nil {
				t.Fatalf("ParseIf(%q): %v, %v", h, lists, err)
			}
			return
		}
		for _, l := range lists {
			if l.Tag != "" {
				if c, _, err := shoal.CleanPath(l.Tag); err != nil || c != l.Tag {
					t.Fatalf("ParseIf(%q): tag %q is not a clean path", h, l.Tag)
				}
			}
			for _, c := range l.Conds {
				if (c.Token == "") == (c.ETag == "") {
					t.Fatalf("ParseIf(%q): condition %+v", h, c)
				}
			}
		}
		_ = SubmittedTokens(lists)
	})
}

// FuzzParsePropfind: any body is a request of a known kind or KindInvalid.
func FuzzParsePropfind(f *testing.F) {
	for _, s := range []string{"", `<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind>`,
		`<D:propfind xmlns:D="DAV:"><D:prop><D:getetag/><x:y xmlns:x="urn:x"/></D:prop></D:propfind>`,
		`<D:propfind xmlns:D="DAV:"><D:propname/></D:propfind>`,
		`<D:propfind xmlns:D="DAV:"><D:allprop/><D:include><D:lockdiscovery/></D:include></D:propfind>`,
		`<!DOCTYPE x [<!ENTITY a "aaaa">]><D:propfind xmlns:D="DAV:">&a;</D:propfind>`, `<D:propfind xmlns:D="DAV:">`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := parsePropfind(body)
		if err != nil {
			if !shoal.IsKind(err, shoal.KindInvalid) {
				t.Fatalf("parsePropfind(%q): %v", body, err)
			}
			return
		}
		for _, n := range append(req.names, req.include...) {
			if n.Local == "" {
				t.Fatalf("parsePropfind(%q): a property without a name", body)
			}
		}
	})
}

// FuzzParseProppatch: set values are re-serialized as well-formed XML.
func FuzzParseProppatch(f *testing.F) {
	for _, s := range []string{`<D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><x xmlns="urn:x">1<b a="q&amp;">t</b></x></D:prop></D:set></D:propertyupdate>`,
		`<D:propertyupdate xmlns:D="DAV:"><D:remove><D:prop><x xmlns="urn:x"/></D:prop></D:remove></D:propertyupdate>`,
		`<D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><D:displayname>é</D:displayname></D:prop></D:set></D:propertyupdate>`,
		`<D:propertyupdate xmlns:D="DAV:"></D:propertyupdate>`, `<x/>`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		ops, err := ParseProppatch(body)
		if err != nil {
			if !shoal.IsKind(err, shoal.KindInvalid) {
				t.Fatalf("ParseProppatch(%q): %v", body, err)
			}
			return
		}
		for _, op := range ops {
			if op.Prop.Name == "" {
				t.Fatalf("ParseProppatch(%q): a property without a name", body)
			}
			d := xml.NewDecoder(strings.NewReader("<v>" + op.Prop.Value + "</v>"))
			for {
				if _, err := d.Token(); err != nil {
					if err.Error() != "EOF" {
						t.Fatalf("ParseProppatch(%q): value %q is not well-formed: %v", body, op.Prop.Value, err)
					}
					break
				}
			}
		}
	})
}

// FuzzParseLockinfo: a lockinfo body gives a scope and an owner, or
// KindInvalid.
func FuzzParseLockinfo(f *testing.F) {
	for _, s := range []string{fmtLock("exclusive", "<D:href>me</D:href>"), fmtLock("shared", "ann"), fmtLock("bogus", ""),
		`<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope></D:lockinfo>`, `<D:lockinfo xmlns:D="DAV:">`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		l, err := ParseLockinfo(body)
		if err != nil {
			if !shoal.IsKind(err, shoal.KindInvalid) || l != nil {
				t.Fatalf("ParseLockinfo(%q): %v, %v", body, l, err)
			}
			return
		}
		if len(l.Owner) > len(body) {
			t.Fatalf("ParseLockinfo(%q): owner %d bytes from a %d-byte body", body, len(l.Owner), len(body))
		}
	})
}

func fmtLock(scope, owner string) string {
	return `<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:` + scope + `/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner>` + owner + `</D:owner></D:lockinfo>`
}

// FuzzParseWantDigest: at most the known algorithms, each once, ordered by
// decreasing q, none with q=0.
func FuzzParseWantDigest(f *testing.F) {
	for _, s := range []string{"adler32", "ADLER32;q=0.5, md5;q=1", "md5;q=0, adler32", "sha-256;q=0.3,UNIXsum", ";;;,,", "md5;q=1.0000001"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, h []byte) {
		w := ParseWantDigest(h)
		if w.n < 0 || w.n > len(w.alg) {
			t.Fatalf("ParseWantDigest(%q): %d algorithms", h, w.n)
		}
		seen := map[uint8]bool{}
		for i := 0; i < w.n; i++ {
			if seen[w.alg[i]] || w.qval[i] <= 0 || w.qval[i] > 1000 || i > 0 && w.qval[i] > w.qval[i-1] {
				t.Fatalf("ParseWantDigest(%q) = %+v", h, w)
			}
			seen[w.alg[i]] = true
		}
	})
}

// FuzzParseDestination: a Destination is a clean path (decoded: its
// escaped form cleans back to it), or refused.
func FuzzParseDestination(f *testing.F) {
	for _, s := range []string{"/a/b", "http://h:1/a%20b/", "https://h/.shoal/x", "/a/../b", "ftp:/x", "http://h", "//x", "/a?q#f", "http://h/%ff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, h []byte) {
		p, err := ParseDestination(h)
		if err != nil {
			return
		}
		if c, _, err := shoal.CleanPath(shoal.EscapePath(p)); err != nil || c != p {
			t.Fatalf("ParseDestination(%q) = %q", h, p)
		}
	})
}

// FuzzParseOverwriteTimeout: Overwrite is T, F or refused; a lock timeout
// is within (0, max].
func FuzzParseOverwriteTimeout(f *testing.F) {
	for _, s := range []string{"T", "f", "", "yes", "Second-10", "Infinite, Second-4100000000", "Second--1", "Second-99999999999999999999"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, h []byte) {
		if _, err := ParseOverwrite(h); err != nil && !shoal.IsKind(err, shoal.KindInvalid) {
			t.Fatalf("ParseOverwrite(%q): %v", h, err)
		}
		if d := ParseTimeout(h, 10*time.Minute, time.Hour); d <= 0 || d > time.Hour {
			t.Fatalf("ParseTimeout(%q) = %v", h, d)
		}
	})
}
