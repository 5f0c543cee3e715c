package dav

import (
	"encoding/xml"
	"reflect"
	"testing"
)

// davixBody is the PROPFIND body davix (and so gfal2) sends for stat and
// listing (davix 0.8): named live properties, a quota one, and dead
// LCGDM ones.
const davixBody = `<?xml version="1.0" encoding="utf-8" ?><D:propfind xmlns:D="DAV:" xmlns:L="LCGDM:"><D:prop><D:displayname/><D:getlastmodified/><D:creationdate/><D:getcontentlength/><D:quota-used-bytes/><D:resourcetype><D:collection/></D:resourcetype><L:mode/><D:owner></D:owner><D:group></D:group></D:prop></D:propfind>`

// fastBodies are the PROPFIND bodies of real clients and the shapes
// around them, with whether recognizePropfind reads them itself.
var fastBodies = []struct {
	name string
	body string
	fast bool
}{
	{"davix and gfal2 (davix 0.8)", davixBody, true},
	{"allprop", `<?xml version="1.0" encoding="utf-8" ?><D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind>`, true},
	{"allprop, default namespace", "<?xml version=\"1.0\"?>\n<propfind xmlns=\"DAV:\">\n  <allprop/>\n</propfind>\n", true},
	{"propname", `<D:propfind xmlns:D="DAV:"><D:propname></D:propname></D:propfind>`, true},
	{"named props, curl style", `<?xml version="1.0"?><a:propfind xmlns:a="DAV:"><a:prop><a:getlastmodified/><a:getcontentlength/><a:resourcetype/><a:getetag/></a:prop></a:propfind>`, true},
	{"Windows mini-redirector", `<?xml version="1.0" encoding="utf-8" ?><D:propfind xmlns:D="DAV:"><D:prop><D:creationdate/><D:displayname/><D:getcontentlength/><D:getcontenttype/><D:getetag/><D:getlastmodified/><D:resourcetype/><D:supportedlock/><D:lockdiscovery/><D:quota-available-bytes/><D:quota-used-bytes/></D:prop></D:propfind>`, true},
	{"namespaces on properties", `<propfind xmlns="DAV:" xmlns:oc="http://owncloud.org/ns"><prop><getetag/><oc:fileid/><x:y xmlns:x='urn:x'></x:y><z xmlns="urn:z"/></prop></propfind>`, true},
	{"allprop with include", `<D:propfind xmlns:D="DAV:"><D:allprop/><D:include><D:quota-used-bytes/><D:lockdiscovery/></D:include></D:propfind>`, true},
	{"two props", `<D:propfind xmlns:D="DAV:"><D:prop><D:getetag/></D:prop><D:prop><D:displayname/></D:prop></D:propfind>`, true},
	{"empty prop", `<D:propfind xmlns:D="DAV:"><D:prop/></D:propfind>`, true},
	{"standalone", `<?xml version='1.0' encoding='UTF-8' standalone='yes'?><D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind>`, true},

	{"comment", `<D:propfind xmlns:D="DAV:"><!-- hi --><D:allprop/></D:propfind>`, false},
	{"entity", `<!DOCTYPE x [<!ENTITY a "aaaa">]><D:propfind xmlns:D="DAV:">&a;</D:propfind>`, false},
	{"latin-1", `<?xml version="1.0" encoding="ISO-8859-1"?><D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind>`, false},
	{"undeclared prefix", `<D:propfind xmlns:D="DAV:"><D:prop><x:y/></D:prop></D:propfind>`, false},
	{"wrong end tag", `<D:propfind xmlns:D="DAV:"><D:prop><D:getetag></E:getetag></D:prop></D:propfind>`, false},
	{"other root", `<D:propertyupdate xmlns:D="DAV:"><D:allprop/></D:propertyupdate>`, false},
	{"no DAV namespace", `<propfind><allprop/></propfind>`, false},
	{"unknown child", `<D:propfind xmlns:D="DAV:"><D:foo/><D:allprop/></D:propfind>`, false},
	{"include alone", `<D:propfind xmlns:D="DAV:"><D:include><D:getetag/></D:include></D:propfind>`, false},
	{"text", `<D:propfind xmlns:D="DAV:"><D:prop><D:getetag>x</D:getetag></D:prop></D:propfind>`, false},
	{"attribute", `<D:propfind xmlns:D="DAV:" a="b"><D:allprop/></D:propfind>`, false},
	{"trailing element", `<D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind><x/>`, false},
	{"unterminated", `<D:propfind xmlns:D="DAV:"><D:allprop/>`, false},
	{"empty namespace", `<D:propfind xmlns:D="DAV:"><D:prop><x:y xmlns:x=""/></D:prop></D:propfind>`, false},
}

// TestRecognizePropfind: the bodies clients send are read by the fast
// path, with the request parsePropfind gives; the others are left to it.
func TestRecognizePropfind(t *testing.T) {
	for _, c := range fastBodies {
		req, ok := recognizePropfind([]byte(c.body))
		if ok != c.fast {
			t.Errorf("%s: recognized %v, want %v", c.name, ok, c.fast)
			continue
		}
		if !ok {
			continue
		}
		want, err := parsePropfind([]byte(c.body))
		if err != nil {
			t.Errorf("%s: recognized a body the parser refuses: %v", c.name, err)
			continue
		}
		if !sameRequest(req, want) {
			t.Errorf("%s: fast %+v, parser %+v", c.name, req, want)
		}
	}
	req, _ := recognizePropfind([]byte(davixBody))
	want := []xml.Name{{Space: "DAV:", Local: "displayname"}, {Space: "DAV:", Local: "getlastmodified"}, {Space: "DAV:", Local: "creationdate"},
		{Space: "DAV:", Local: "getcontentlength"}, {Space: "DAV:", Local: "quota-used-bytes"}, {Space: "DAV:", Local: "resourcetype"},
		{Space: "LCGDM:", Local: "mode"}, {Space: "DAV:", Local: "owner"}, {Space: "DAV:", Local: "group"}}
	if req == nil || req.kind != findProp || !reflect.DeepEqual(req.names, want) {
		t.Errorf("davix body: %+v, want prop %v", req, want)
	}
}

func sameRequest(a, b *Propfind) bool {
	return a.kind == b.kind && len(a.names) == len(b.names) && len(a.include) == len(b.include) &&
		(len(a.names) == 0 || reflect.DeepEqual(a.names, b.names)) && (len(a.include) == 0 || reflect.DeepEqual(a.include, b.include))
}

// FuzzRecognizePropfind: whatever the fast path reads, the parser reads
// the same way (it never accepts what the parser refuses, nor reads a body
// differently).
func FuzzRecognizePropfind(f *testing.F) {
	for _, c := range fastBodies {
		f.Add([]byte(c.body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, ok := recognizePropfind(body)
		if !ok {
			return
		}
		want, err := parsePropfind(body)
		if err != nil {
			t.Fatalf("recognizePropfind(%q) = %+v, the parser refuses it: %v", body, req, err)
		}
		if !sameRequest(req, want) {
			t.Fatalf("recognizePropfind(%q) = %+v, the parser reads %+v", body, req, want)
		}
	})
}

// BenchmarkRecognizePropfind and BenchmarkParsePropfind: what reading
// davix's body costs through the fast path and through encoding/xml (a
// body not yet memoized: a new client, or more distinct bodies than the
// memo keeps).
func BenchmarkRecognizePropfind(b *testing.B) {
	body := []byte(davixBody)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := recognizePropfind(body); !ok {
			b.Fatal("not recognized")
		}
	}
}

func BenchmarkParsePropfind(b *testing.B) {
	body := []byte(davixBody)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parsePropfind(body); err != nil {
			b.Fatal(err)
		}
	}
}
