package md

import (
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// multistatus is the client's view of a 207 body, parsed with
// encoding/xml to check that md's hand-written XML is well-formed.
type multistatus struct {
	Responses []struct {
		Href      string `xml:"DAV: href"`
		Propstats []struct {
			Prop struct {
				Any []struct {
					XMLName xml.Name
					Inner   string `xml:",innerxml"`
				} `xml:",any"`
			} `xml:"DAV: prop"`
			Status string `xml:"DAV: status"`
		} `xml:"DAV: propstat"`
	} `xml:"DAV: response"`
}

func parseMS(t *testing.T, body string) multistatus {
	t.Helper()
	var ms multistatus
	if err := xml.Unmarshal([]byte(body), &ms); err != nil {
		t.Fatalf("multistatus does not parse: %v\n%s", err, body)
	}
	return ms
}

// props maps "space local" → inner XML for the 200 propstat of response i,
// and lists the 404 ones.
func (ms multistatus) props(i int) (found map[string]string, missing []string) {
	found = map[string]string{}
	for _, ps := range ms.Responses[i].Propstats {
		for _, p := range ps.Prop.Any {
			k := p.XMLName.Space + " " + p.XMLName.Local
			if strings.Contains(ps.Status, "200") {
				found[k] = p.Inner
			} else {
				missing = append(missing, k+" "+ps.Status)
			}
		}
	}
	return found, missing
}

func TestPropfind(t *testing.T) {
	e := newEnv(t, DataProxy)
	e.do("MKCOL", "/c", nil, nil)
	e.do("MKCOL", "/c/sub dir", nil, nil)
	e.put("/c/f.txt", []byte("hello")).want(t, "PUT", 201, "")
	d1 := map[string]string{"Depth": "1"}

	r := e.do("PROPFIND", "/c", d1, nil)
	r.want(t, "PROPFIND Depth 1", 207, "")
	ms := parseMS(t, r.body)
	if len(ms.Responses) != 3 || ms.Responses[0].Href != "/c/" {
		t.Fatalf("Depth 1: %d responses, first %q; want 3, /c/ first", len(ms.Responses), ms.Responses[0].Href)
	}
	hrefs := ms.Responses[1].Href + " " + ms.Responses[2].Href
	if hrefs != "/c/f.txt /c/sub%20dir/" {
		t.Errorf("children hrefs %q", hrefs)
	}
	found, _ := ms.props(1)
	for _, p := range []string{"getcontentlength", "getlastmodified", "resourcetype", "getetag", "creationdate", "getcontenttype", "displayname"} {
		if _, ok := found["DAV: "+p]; !ok {
			t.Errorf("allprop of a file lacks %s", p)
		}
	}
	if found["DAV: getcontentlength"] != "5" || found["DAV: getcontenttype"] != "text/plain; charset=utf-8" {
		t.Errorf("file props %v", found)
	}
	if _, ok := found["DAV: quota-used-bytes"]; ok {
		t.Error("quota in allprop")
	}

	// Named properties, quota included; unknown ones are 404.
	body := `<?xml version="1.0"?><D:propfind xmlns:D="DAV:" xmlns:Z="urn:z"><D:prop><D:quota-used-bytes/><D:quota-available-bytes/><D:getetag/><Z:nothing/></D:prop></D:propfind>`
	r = e.do("PROPFIND", "/c/", map[string]string{"Depth": "0"}, []byte(body))
	r.want(t, "PROPFIND prop", 207, "")
	ms = parseMS(t, r.body)
	found, missing := ms.props(0)
	if found["DAV: quota-used-bytes"] != "5" || found["DAV: quota-available-bytes"] == "" || found["DAV: getetag"] == "" {
		t.Errorf("named props %v", found)
	}
	if len(missing) != 1 || !strings.HasPrefix(missing[0], "urn:z nothing HTTP/1.1 404") {
		t.Errorf("missing %v", missing)
	}

	// propname
	r = e.do("PROPFIND", "/c/f.txt", map[string]string{"Depth": "0"}, []byte(`<propfind xmlns="DAV:"><propname/></propfind>`))
	r.want(t, "propname", 207, "<D:getcontentlength/>")

	// Refusals
	before := e.snapshot()
	r = e.do("PROPFIND", "/c", nil, nil)
	r.want(t, "no Depth", 403, "propfind-finite-depth")
	e.do("PROPFIND", "/c", map[string]string{"Depth": "infinity"}, nil).want(t, "Depth infinity", 403, "propfind-finite-depth")
	e.do("PROPFIND", "/c", map[string]string{"Depth": "2"}, nil).want(t, "Depth 2", 400, "Depth")
	e.do("PROPFIND", "/c", map[string]string{"Depth": "0"}, []byte("<D:propfind xmlns:D='DAV:'><D:prop>")).want(t, "truncated XML", 400, "XML")
	e.do("PROPFIND", "/c", map[string]string{"Depth": "0"}, []byte("<a>not dav</a>")).want(t, "wrong root", 400, "propfind")
	// Oversized: md answers once fasthttp has read the first 8 KiB, without
	// reading the rest (raw TCP: a client still writing would see the
	// connection closed).
	c, br := rawConn(t, e.url)
	fmt.Fprintf(c, "PROPFIND /c HTTP/1.1\r\nHost: x\r\nDepth: 0\r\nContent-Length: %d\r\n\r\n<D:propfind>%s", 2<<20, strings.Repeat(" ", 16<<10))
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	c.Close()
	if res.StatusCode != 413 || !strings.Contains(string(b), "large") {
		t.Errorf("oversized XML: %d %q", res.StatusCode, b)
	}
	e.do("PROPFIND", "/none", map[string]string{"Depth": "0"}, nil).want(t, "missing", 404, "")
	if e.snapshot() != before {
		t.Error("refused PROPFINDs changed the catalog")
	}
}

func TestProppatch(t *testing.T) {
	e := newEnv(t, DataProxy)
	e.put("/f", []byte("x"))
	set := `<?xml version="1.0" encoding="utf-8" ?>
<D:propertyupdate xmlns:D="DAV:" xmlns:Z="http://ns.example.com/z/">
  <D:set><D:prop><Z:author>Ann &amp; Bob</Z:author><Z:nested><Z:a x="1">deep</Z:a></Z:nested><plain xmlns="">p</plain></D:prop></D:set>
  <D:set><D:prop><Z:gone>soon</Z:gone></D:prop></D:set>
  <D:remove><D:prop><Z:gone/></D:prop></D:remove>
</D:propertyupdate>`
	r := e.do("PROPPATCH", "/f", nil, []byte(set))
	r.want(t, "PROPPATCH", 207, "200 OK")
	r = e.do("PROPFIND", "/f", map[string]string{"Depth": "0"}, nil)
	ms := parseMS(t, r.body)
	found, _ := ms.props(0)
	if found["http://ns.example.com/z/ author"] != "Ann &amp; Bob" {
		t.Errorf("author %q", found["http://ns.example.com/z/ author"])
	}
	if !strings.Contains(found["http://ns.example.com/z/ nested"], `xmlns="http://ns.example.com/z/"`) {
		t.Errorf("nested value lost its namespace: %q", found["http://ns.example.com/z/ nested"])
	}
	if found[" plain"] != "p" {
		t.Errorf("no-namespace prop %v", found)
	}
	if _, ok := found["http://ns.example.com/z/ gone"]; ok {
		t.Error("set then removed property is present")
	}

	// A live property makes the whole request fail: 403 for it, 424 for the rest.
	before := e.snapshot()
	bad := `<D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:z"><D:set><D:prop><D:getetag>"x"</D:getetag><Z:other>1</Z:other></D:prop></D:set></D:propertyupdate>`
	r = e.do("PROPPATCH", "/f", nil, []byte(bad))
	r.want(t, "PROPPATCH live", 207, "403 Forbidden")
	if !strings.Contains(r.body, "424 Failed Dependency") {
		t.Errorf("no 424 for the other property: %s", r.body)
	}
	e.do("PROPPATCH", "/f", nil, []byte("<D:propertyupdate xmlns:D='DAV:'><D:set>")).want(t, "malformed", 400, "XML")
	e.do("PROPPATCH", "/f", nil, nil).want(t, "no body", 400, "")
	e.do("PROPPATCH", "/nope", nil, []byte(set)).want(t, "missing", 404, "")
	if e.snapshot() != before {
		t.Error("refused PROPPATCH changed the catalog")
	}
}
