package sign

import (
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"shoal"
)

func TestSignVerify(t *testing.T) {
	k := Random()
	now := time.Now()
	exp := now.Add(time.Minute).Unix()
	kid, sig := k.Sign("GET", "abc", exp, "")
	if err := k.Verify("GET", "abc", exp, "", kid, sig, now); err != nil {
		t.Fatalf("valid signature refused: %v", err)
	}
	cases := []struct {
		name              string
		method, obj, xtra string
		exp               int64
		kid, sig          string
		now               time.Time
	}{
		{"method", "PUT", "abc", "", exp, kid, sig, now},
		{"object", "GET", "abd", "", exp, kid, sig, now},
		{"extra", "GET", "abc", "x", exp, kid, sig, now},
		{"expiry changed", "GET", "abc", "", exp + 1, kid, sig, now},
		{"expired", "GET", "abc", "", exp, kid, sig, now.Add(2 * time.Minute)},
		{"unknown kid", "GET", "abc", "", exp, "nope", sig, now},
		{"not hex", "GET", "abc", "", exp, kid, "zz", now},
		{"flipped", "GET", "abc", "", exp, kid, flip(sig), now},
	}
	for _, c := range cases {
		err := k.Verify(c.method, c.obj, c.exp, c.xtra, c.kid, c.sig, c.now)
		if !shoal.IsKind(err, shoal.KindPermission) {
			t.Errorf("%s: got %v, want permission denied", c.name, err)
		}
	}
}

func flip(s string) string {
	b := []byte(s)
	if b[0] == '0' {
		b[0] = '1'
	} else {
		b[0] = '0'
	}
	return string(b)
}

func TestRotation(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "secret")
	os.WriteFile(f, []byte("# keys\nk2 new-secret-0123456789\nk1 old-secret-0123456789\n"), 0o600)
	k, err := Load(f)
	if err != nil {
		t.Fatal(err)
	}
	old, _ := NewKeys("k1", map[string][]byte{"k1": []byte("old-secret-0123456789")})
	exp := time.Now().Add(time.Minute).Unix()
	kid, sig := old.Sign("GET", "ab", exp, "")
	if err := k.Verify("GET", "ab", exp, "", kid, sig, time.Now()); err != nil {
		t.Errorf("old key refused after rotation: %v", err)
	}
	if kid, _ := k.Sign("GET", "ab", exp, ""); kid != "k2" {
		t.Errorf("signs with %q, want k2 (first line)", kid)
	}
}

func TestURL(t *testing.T) {
	k := Random()
	exp := time.Now().Add(time.Minute)
	raw := k.URL("http://127.0.0.1:1/", "PUT", "00ff", "up1", exp)
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(raw, "http://127.0.0.1:1/obj/00ff?") {
		t.Errorf("url %s", raw)
	}
	q := u.Query()
	e, _ := strconv.ParseInt(q.Get(ParamExpiry), 10, 64)
	if err := k.Verify("PUT", "00ff", e, q.Get(ParamUpload), q.Get(ParamKeyID), q.Get(ParamSig), time.Now()); err != nil {
		t.Errorf("URL does not verify: %v", err)
	}
}

func TestVerifyQuery(t *testing.T) {
	keys := Random()
	now := time.Now()
	exp := now.Add(time.Minute).Unix()
	kid, sig := keys.Sign("GET", "ab", exp, "up")
	q := map[string]string{ParamExpiry: strconv.FormatInt(exp, 10), ParamKeyID: kid, ParamSig: sig}
	get := func(k string) string { return q[k] }
	if err := keys.VerifyQuery("GET", "ab", "up", get, now); err != nil {
		t.Errorf("GET: %v", err)
	}
	if err := keys.VerifyQuery("HEAD", "ab", "up", get, now); err != nil {
		t.Errorf("HEAD with a GET signature: %v", err)
	}
	for _, c := range []struct{ method, object, extra string }{{"PUT", "ab", "up"}, {"GET", "ac", "up"}, {"GET", "ab", "other"}} {
		if err := keys.VerifyQuery(c.method, c.object, c.extra, get, now); !shoal.IsKind(err, shoal.KindPermission) {
			t.Errorf("%v: %v, want KindPermission", c, err)
		}
	}
	if err := keys.VerifyQuery("GET", "ab", "up", get, now.Add(2*time.Minute)); !shoal.IsKind(err, shoal.KindPermission) {
		t.Errorf("expired: %v", err)
	}
	delete(q, ParamSig)
	if err := keys.VerifyQuery("GET", "ab", "up", get, now); !shoal.IsKind(err, shoal.KindPermission) {
		t.Errorf("no sig: %v", err)
	}
}

// TestInternalAPIKeysAndLifetime: the findings "verify-only keys may be a
// single byte; signed URLs have no maximum lifetime".
func TestInternalAPIKeysAndLifetime(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "secret")
	os.WriteFile(f, []byte("k2 a-long-enough-secret-01234\nk1 x\n"), 0o600)
	if _, err := Load(f); !shoal.IsKind(err, shoal.KindInvalid) || !strings.Contains(err.Error(), "k1") {
		t.Errorf("a 1-byte verify-only key: %v, want refused naming k1", err)
	}
	k := Random()
	now := time.Now()
	for _, c := range []struct {
		life time.Duration
		ok   bool
	}{{time.Minute, true}, {DefaultMaxLifetime, true}, {DefaultMaxLifetime + 2*time.Second, false}, {30 * 24 * time.Hour, false}} {
		exp := now.Add(c.life).Unix()
		kid, sig := k.Sign("GET", "abc", exp, "")
		if err := k.Verify("GET", "abc", exp, "", kid, sig, now); (err == nil) != c.ok {
			t.Errorf("a signature valid for %v: %v", c.life, err)
		}
	}
	k.SetMaxLifetime(time.Minute)
	exp := now.Add(2 * time.Minute).Unix()
	kid, sig := k.Sign("GET", "abc", exp, "")
	if err := k.Verify("GET", "abc", exp, "", kid, sig, now); !shoal.IsKind(err, shoal.KindPermission) {
		t.Errorf("2 minutes with a 1 minute maximum: %v", err)
	}
}

// FuzzVerifyQuery: any query is accepted only if this key signed it for
// the method and object, before its expiry and within the maximum
// lifetime; never a panic.
func FuzzVerifyQuery(f *testing.F) {
	k := Random()
	now := time.Unix(1_800_000_000, 0)
	good, _ := url.Parse(k.URL("http://h", "GET", "abc", "", now.Add(time.Minute)))
	f.Add(good.RawQuery, "GET")
	f.Add("exp=1&kid=k0&sig=zz", "PUT")
	f.Add("exp=99999999999999999999&kid=&sig=", "HEAD")
	f.Fuzz(func(t *testing.T, rawQuery, method string) {
		q, err := url.ParseQuery(rawQuery)
		if err != nil {
			return
		}
		err = k.VerifyQuery(method, "abc", "", q.Get, now)
		if err == nil && (q.Get(ParamSig) != good.Query().Get(ParamSig) || q.Get(ParamExpiry) != good.Query().Get(ParamExpiry)) {
			t.Fatalf("a query not signed by the key was accepted: %q %s", rawQuery, method)
		}
	})
}

// TestPutURLLimit: the bound of a PUT URL is signed: it verifies as given
// and cannot be raised, dropped or added.
func TestPutURLLimit(t *testing.T) {
	k := Random()
	now := time.Now()
	check := func(raw string) (string, int64, error) {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		g, err := k.VerifyObjectQuery("PUT", "00ff", u.Query().Get, now)
		if g.CallerCommits {
			t.Errorf("%s: caller commits, but it was not signed so", raw)
		}
		return g.Upload, g.Max, err
	}
	raw := k.PutURLAs("http://h:1", "00ff", "up1", "", 1234, now.Add(time.Minute))
	up, max, err := check(raw)
	if err != nil || up != "up1" || max != 1234 {
		t.Fatalf("PutURL verifies as %q, %d, %v", up, max, err)
	}
	for name, bad := range map[string]string{
		"raised":  strings.Replace(raw, "max=1234", "max=99999", 1),
		"dropped": strings.Replace(raw, "&max=1234", "", 1),
		"padded":  strings.Replace(raw, "max=1234", "max=01234", 1),
	} {
		if _, _, err := check(bad); !shoal.IsKind(err, shoal.KindPermission) {
			t.Errorf("%s bound: %v, want KindPermission", name, err)
		}
	}
	unbounded := k.PutURLAs("http://h:1", "00ff", "up1", "", NoLimit, now.Add(time.Minute))
	if _, max, err := check(unbounded); err != nil || max != NoLimit {
		t.Errorf("unbounded PutURL: %d, %v", max, err)
	}
	if _, _, err := check(unbounded + "&max=1"); !shoal.IsKind(err, shoal.KindPermission) {
		t.Errorf("bound added to an unbounded URL: %v, want KindPermission", err)
	}
	// URL (no bound) and PutURLAs with NoLimit sign the same.
	if _, max, err := check(k.URL("http://h:1", "PUT", "00ff", "up1", now.Add(time.Minute))); err != nil || max != NoLimit {
		t.Errorf("URL: %d, %v", max, err)
	}
}

// TestCallerCommitsURL: a URL whose upload its caller commits says so
// under its signature: the mark can be neither dropped nor added.
func TestCallerCommitsURL(t *testing.T) {
	k := Random()
	now := time.Now()
	check := func(raw string) (Grant, error) {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		return k.VerifyObjectQuery("PUT", "00ff", u.Query().Get, now)
	}
	raw := k.CallerCommitsURLAs("http://h:1", "00ff", "up1", "alice", 1234, now.Add(time.Minute))
	if g, err := check(raw); err != nil || g != (Grant{Upload: "up1", Max: 1234, CallerCommits: true}) {
		t.Fatalf("CallerCommitsURLAs verifies as %+v, %v", g, err)
	}
	plain := k.PutURLAs("http://h:1", "00ff", "up1", "alice", 1234, now.Add(time.Minute))
	for name, bad := range map[string]string{
		"dropped": strings.Replace(raw, "cc=1&", "", 1),
		"changed": strings.Replace(raw, "cc=1", "cc=2", 1),
		"added":   plain + "&cc=1",
	} {
		if _, err := check(bad); !shoal.IsKind(err, shoal.KindPermission) {
			t.Errorf("%s: %v, want KindPermission", name, err)
		}
	}
}

// FuzzVerifyObjectQuery: no query that md did not sign verifies, bound
// included.
func FuzzVerifyObjectQuery(f *testing.F) {
	k := Random()
	now := time.Unix(1_800_000_000, 0)
	good, _ := url.Parse(k.PutURLAs("http://h", "abc", "up", "", 4096, now.Add(time.Minute)))
	f.Add(good.RawQuery)
	f.Add("exp=1&kid=k0&sig=zz&max=-1")
	f.Add("exp=1800000060&kid=k0&sig=00&up=up&max=4096")
	caller, _ := url.Parse(k.CallerCommitsURLAs("http://h", "abc", "up", "", 4096, now.Add(time.Minute)))
	f.Add(caller.RawQuery)
	f.Fuzz(func(t *testing.T, rawQuery string) {
		q, err := url.ParseQuery(rawQuery)
		if err != nil {
			return
		}
		g, err := k.VerifyObjectQuery("PUT", "abc", q.Get, now)
		signed := good
		if g.CallerCommits {
			signed = caller
		}
		if err == nil && (q.Get(ParamSig) != signed.Query().Get(ParamSig) || g.Upload != "up" || g.Max != 4096) {
			t.Fatalf("a query not signed by the key was accepted: %q → %+v", rawQuery, g)
		}
	})
}
