package wire

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"shoal"
	"shoal/sign"
)

// query returns the query getter of a signed URL.
func query(t testing.TB, raw string) func(string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	return q.Get
}

func TestGatewayURL(t *testing.T) {
	keys := sign.Random()
	now := time.Now()
	ec42 := shoal.Layout{Kind: shoal.LayoutEC, K: 4, M: 2}
	servers := []string{"a", "b", "c", "d", "e", ""}
	raw := GatewayURL(keys, "http://gw:1/", "PUT", "ab12", "up1", ec42, servers, now.Add(time.Minute))
	if !strings.HasPrefix(raw, "http://gw:1/obj/ab12?") {
		t.Fatalf("URL %q", raw)
	}
	r, err := VerifyGatewayURL(keys, "PUT", "ab12", query(t, raw), now)
	if err != nil || r.Upload != "up1" || r.Layout != ec42 || strings.Join(r.Servers, ",") != "a,b,c,d,e," {
		t.Fatalf("verified %+v, %v", r, err)
	}
	// Anything the signature covers, changed, is refused.
	for _, c := range []struct{ what, param, value string }{
		{"layout", ParamLayout, "ec:3+3"},
		{"servers", ParamServers, "a,b,c,d,f,"},
		{"upload", sign.ParamUpload, "up2"},
	} {
		get := query(t, raw)
		tampered := func(k string) string {
			if k == c.param {
				return c.value
			}
			return get(k)
		}
		if _, err := VerifyGatewayURL(keys, "PUT", "ab12", tampered, now); !shoal.IsKind(err, shoal.KindPermission) {
			t.Errorf("changed %s: %v, want KindPermission", c.what, err)
		}
	}
	if _, err := VerifyGatewayURL(keys, "GET", "ab12", query(t, raw), now); !shoal.IsKind(err, shoal.KindPermission) {
		t.Errorf("PUT URL used for GET: %v", err)
	}
	if r.Max != sign.NoLimit {
		t.Errorf("unbounded URL verified with max %d", r.Max)
	}
	// A bounded PUT: the bound verifies, and is covered by the signature.
	bounded := GatewayPutURLAs(keys, "http://gw:1/", "ab12", "up1", "", ec42, servers, 5000, now.Add(time.Minute))
	if r, err := VerifyGatewayURL(keys, "PUT", "ab12", query(t, bounded), now); err != nil || r.Max != 5000 {
		t.Errorf("bounded PUT verified as %+v, %v", r, err)
	}
	for _, v := range []string{"5001", ""} {
		get := query(t, bounded)
		tampered := func(k string) string {
			if k == sign.ParamMax {
				return v
			}
			return get(k)
		}
		if _, err := VerifyGatewayURL(keys, "PUT", "ab12", tampered, now); !shoal.IsKind(err, shoal.KindPermission) {
			t.Errorf("bound changed to %q: %v, want KindPermission", v, err)
		}
	}
	// Well signed, but a list that does not fit the layout.
	replica2, _ := shoal.ParseLayout("replica:2")
	for _, c := range []struct {
		what    string
		layout  shoal.Layout
		servers []string
	}{
		{"too few servers", ec42, []string{"a", "b", "c", "d", "e"}},
		{"M shards left out", ec42, []string{"a", "b", "c", "d", "", ""}},
		{"a replica left out", replica2, []string{"a", ""}},
		{"a repeated server", ec42, []string{"a", "b", "c", "d", "e", "a"}},
	} {
		raw := GatewayURL(keys, "http://gw:1", "GET", "ab12", "", c.layout, c.servers, now.Add(time.Minute))
		if _, err := VerifyGatewayURL(keys, "GET", "ab12", query(t, raw), now); !shoal.IsKind(err, shoal.KindInvalid) {
			t.Errorf("%s: %v, want KindInvalid", c.what, err)
		}
	}
}

// FuzzVerifyGatewayURL: any query is refused or verified into a request
// whose server list fits its layout; never a panic.
func FuzzVerifyGatewayURL(f *testing.F) {
	keys, err := sign.NewKeys("k0", map[string][]byte{"k0": []byte("0123456789abcdef0123456789abcdef")})
	if err != nil {
		f.Fatal(err)
	}
	exp := time.Unix(2_000_000_000, 0)
	ec21 := shoal.Layout{Kind: shoal.LayoutEC, K: 2, M: 1}
	for _, raw := range []string{
		GatewayURL(keys, "", "GET", "ab", "", ec21, []string{"a", "b", "c"}, exp),
		GatewayURL(keys, "", "GET", "ab", "", ec21, []string{"a", "b", ""}, exp),
		GatewayURL(keys, "", "GET", "ab", "", ec21, []string{"a", "a", "c"}, exp),
		GatewayPutURLAs(keys, "", "ab", "up", "", ec21, []string{"a", "b", "c"}, 100, exp),
	} {
		f.Add("ab", raw[strings.Index(raw, "?")+1:])
	}
	f.Add("ab", "l=ec:0+0&srv=&exp=x&kid=k0&sig=zz")
	f.Fuzz(func(t *testing.T, object, rawQuery string) {
		q, err := url.ParseQuery(rawQuery)
		if err != nil {
			return
		}
		r, err := VerifyGatewayURL(keys, "GET", object, q.Get, exp.Add(-time.Hour))
		if err != nil {
			if k := shoal.KindOf(err); k != shoal.KindPermission && k != shoal.KindInvalid {
				t.Fatalf("error of kind %v: %v", k, err)
			}
			return
		}
		if len(r.Servers) != r.Layout.Width() {
			t.Fatalf("verified %+v: %d servers for %s", r, len(r.Servers), r.Layout)
		}
	})
}
