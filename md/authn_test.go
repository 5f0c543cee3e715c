package md

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"shoal/auth"
	"shoal/auth/rules"
	"shoal/auth/token"
	"shoal/auth/users"
	"shoal/internal/testissuer"
	"shoal/internal/testlog"
	"shoal/sign"
	"shoal/wire"
)

// testAudience is md's audience in these tests.
const testAudience = "https://md.test"

// authFixture is md with identity: a real test issuer (HTTPS on
// loopback), a users file with bcrypt hashes, and rules.
type authFixture struct {
	*env
	auth *auth.Auth
	is   *testissuer.Issuer
	logs *syncBuffer // access and audit lines, JSON
}

type syncBuffer = testlog.Buffer

// Users of the fixture: root may do anything anywhere (the tests' setup),
// alice anything under /t.
const (
	rootPassword  = "root secret pw"
	alicePassword = "alice:secret pw"
)

func newAuthFixture(t *testing.T, mode string, rs ...rules.Rule) *authFixture {
	t.Helper()
	is := testissuer.New(t)
	v, err := token.New(token.Config{Issuers: []token.IssuerConfig{{URL: is.URL}}, Audiences: []string{testAudience}, RootCAs: is.Pool()})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "users")
	for name, pw := range map[string]string{"root": rootPassword, "alice": alicePassword} {
		if _, err := users.Add(file, name, pw, nil, 4); err != nil {
			t.Fatal(err)
		}
	}
	us, err := users.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	rs = append(rs,
		rules.Rule{Path: "/", Who: "user:root", Rights: []string{"read", "create", "modify"}},
		rules.Rule{Path: "/t", Who: "user:alice", Rights: []string{"read", "create", "modify"}},
	)
	compiled, err := rules.Compile(rs)
	if err != nil {
		t.Fatal(err)
	}
	a := auth.New(auth.Config{Tokens: v, Users: us, Rules: compiled})
	logs := &syncBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, nil))
	e := newEnv(t, mode, func(o *Options) { o.Auth, o.AccessLog, o.AuditLog = a, log, log })
	return &authFixture{env: e, auth: a, is: is, logs: logs}
}

func basicAuth(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

// bearer mints a WLCG token for md with scope.
func (f *authFixture) bearer(scope string) string {
	return "Bearer " + f.is.Mint(f.t, f.is.WLCG("tester", testAudience, scope))
}

// as sends a request with the credential cred ("" for none).
func (f *authFixture) as(cred, method, path string, hdr map[string]string, body []byte) resp {
	f.t.Helper()
	h := map[string]string{}
	for k, v := range hdr {
		h[k] = v
	}
	if cred != "" {
		h["Authorization"] = cred
	}
	return f.do(method, path, h, body)
}

var (
	root = basicAuth("root", rootPassword)
	// a PROPPATCH and a LOCK body
	proppatchBody = []byte(`<D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><x xmlns="urn:x">1</x></D:prop></D:set></D:propertyupdate>`)
	authLockBody  = []byte(`<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>`)
)

// lockToken takes a lock on path as cred and returns its token.
func (f *authFixture) lockToken(cred, path string) string {
	f.t.Helper()
	r := f.as(cred, "LOCK", path, nil, authLockBody)
	if r.status != 200 && r.status != 201 {
		f.t.Fatalf("LOCK %s: %d %s", path, r.status, r.body)
	}
	return r.h.Get("Lock-Token")
}

// TestAuthMethods is every method × every kind of principal: the status
// md answers, WWW-Authenticate on every 401, and, after each refusal, a
// catalog and disks unchanged.
func TestAuthMethods(t *testing.T) {
	f := newAuthFixture(t, DataRedirect)
	f.as(root, "MKCOL", "/t", nil, nil).want(t, "MKCOL /t", 201, "")
	f.as(root, "MKCOL", "/t/dir", nil, nil).want(t, "MKCOL /t/dir", 201, "")

	type principal struct {
		name string
		cred string
		// may: the methods (by case name) this principal may make.
		may string
		// refusal: 401 or 403 for the rest.
		refusal int
	}
	readOnly := "HEAD GET PROPFIND0 PROPFIND1"
	principals := []principal{
		{"anonymous", "", "", 401},
		{"read token", f.bearer("storage.read:/t"), readOnly, 403},
		{"create token", f.bearer("storage.create:/t"), "HEAD PROPFIND0 PUT-new MKCOL MOVE PROPPATCH LOCK UNLOCK", 403},
		{"modify token", f.bearer("storage.modify:/t"), "HEAD PROPFIND0 PUT-new PUT-overwrite MKCOL DELETE MOVE PROPPATCH LOCK UNLOCK", 403},
		{"Basic user", basicAuth("alice", alicePassword), readOnly + " PUT-new PUT-overwrite MKCOL DELETE MOVE COPY PROPPATCH LOCK UNLOCK", 403},
		{"wrong password", basicAuth("alice", "not it"), "", 401},
	}
	type method struct {
		name   string
		status int // when allowed
		// prep makes what the request needs (as root, or for an UNLOCK
		// the principal may make, a lock of its own) on fresh paths (n
		// makes them unique) and returns the request.
		prep func(cred string, may bool, n int) func() resp
	}
	file := func(n int) string {
		p := fmt.Sprintf("/t/f%d", n)
		f.as(root, "PUT", p, nil, []byte("content")).want(t, "setup PUT "+p, 201, "")
		return p
	}
	on := func(method string, hdr map[string]string, body []byte) func(string, bool, int) func() resp {
		return func(c string, _ bool, n int) func() resp {
			p := file(n)
			h := map[string]string{}
			for k, v := range hdr {
				h[k] = strings.ReplaceAll(v, "N", fmt.Sprint(n))
			}
			return func() resp { return f.as(c, method, p, h, body) }
		}
	}
	methods := []method{
		{"HEAD", 200, on("HEAD", nil, nil)},
		{"GET", 200, on("GET", nil, nil)},
		{"PROPFIND0", 207, on("PROPFIND", map[string]string{"Depth": "0"}, nil)},
		{"PROPFIND1", 207, func(c string, _ bool, n int) func() resp {
			return func() resp { return f.as(c, "PROPFIND", "/t/dir", map[string]string{"Depth": "1"}, nil) }
		}},
		{"PUT-new", 201, func(c string, _ bool, n int) func() resp {
			return func() resp { return f.as(c, "PUT", fmt.Sprintf("/t/new%d", n), nil, []byte("new")) }
		}},
		{"PUT-overwrite", 204, on("PUT", nil, []byte("newer"))},
		{"MKCOL", 201, func(c string, _ bool, n int) func() resp {
			return func() resp { return f.as(c, "MKCOL", fmt.Sprintf("/t/col%d", n), nil, nil) }
		}},
		{"DELETE", 204, on("DELETE", nil, nil)},
		{"MOVE", 201, on("MOVE", map[string]string{"Destination": f.url + "/t/movedN"}, nil)},
		{"COPY", 201, on("COPY", map[string]string{"Destination": "/t/copyN"}, nil)},
		{"PROPPATCH", 207, on("PROPPATCH", nil, proppatchBody)},
		{"LOCK", 200, on("LOCK", nil, authLockBody)},
		{"UNLOCK", 204, func(c string, may bool, n int) func() resp {
			p := file(n)
			owner := root // c may not lock: the lock is root's
			if may {
				owner = c
			}
			tok := f.lockToken(owner, p)
			return func() resp { return f.as(c, "UNLOCK", p, map[string]string{"Lock-Token": tok}, nil) }
		}},
	}
	n := 0
	for _, p := range principals {
		for _, m := range methods {
			n++
			t.Run(p.name+"/"+m.name, func(t *testing.T) {
				may := strings.Contains(" "+p.may+" ", " "+m.name+" ")
				req := m.prep(p.cred, may, n)
				if may {
					req().want(t, m.name, m.status, "")
					return
				}
				before := f.snapshot()
				r := req()
				r.want(t, m.name, p.refusal, "")
				if p.refusal == 401 {
					ch := strings.Join(r.h.Values("WWW-Authenticate"), "|")
					if !strings.Contains(ch, `Bearer realm="shoal"`) || !strings.Contains(ch, `Basic realm="shoal"`) {
						t.Errorf("401 without both challenges: %q", ch)
					}
				} else if !strings.Contains(r.body, "needs") {
					t.Errorf("403 without a reason: %q", r.body)
				}
				if after := f.snapshot(); after != before {
					t.Errorf("refused %s changed the namespace:\nbefore\n%s\nafter\n%s", m.name, before, after)
				}
			})
		}
	}
}

// TestAuthLockOwner: a lock's token serves only the principal that took
// it, though anyone who may PROPFIND can read it.
func TestAuthLockOwner(t *testing.T) {
	f := newAuthFixture(t, DataRedirect)
	alice := basicAuth("alice", alicePassword)
	f.as(root, "MKCOL", "/t", nil, nil).want(t, "MKCOL", 201, "")
	f.as(root, "PUT", "/t/f", nil, []byte("v1")).want(t, "PUT", 201, "")
	tok := f.lockToken(root, "/t/f")
	if r := f.as(alice, "PROPFIND", "/t/f", map[string]string{"Depth": "0"}, []byte(`<D:propfind xmlns:D="DAV:"><D:prop><D:lockdiscovery/></D:prop></D:propfind>`)); !strings.Contains(r.body, strings.Trim(tok, "<>")) {
		t.Fatalf("lockdiscovery does not show the token: %s", r.body)
	}
	before := f.snapshot()
	f.as(alice, "PUT", "/t/f", map[string]string{"If": "(" + tok + ")"}, []byte("v2")).want(t, "alice PUT with root's token", 423, "")
	f.as(alice, "UNLOCK", "/t/f", map[string]string{"Lock-Token": tok}, nil).want(t, "alice UNLOCK of root's lock", 403, "another principal")
	f.as(alice, "LOCK", "/t/f", map[string]string{"If": "(" + tok + ")"}, nil).want(t, "alice refreshing root's lock", 403, "another principal")
	if after := f.snapshot(); after != before {
		t.Fatalf("refusals changed the namespace")
	}
	f.as(root, "PUT", "/t/f", map[string]string{"If": "(" + tok + ")"}, []byte("v2")).want(t, "root PUT with its token", 204, "")
	f.as(root, "UNLOCK", "/t/f", map[string]string{"Lock-Token": tok}, nil).want(t, "root UNLOCK", 204, "")
	f.as(alice, "PUT", "/t/f", nil, []byte("v3")).want(t, "alice PUT once unlocked", 204, "")
}

// TestAuthCreateOnly: a principal that may create but not modify gets
// 403 for a write onto an existing target, and its writes onto absent
// ones never replace anything.
func TestAuthCreateOnly(t *testing.T) {
	f := newAuthFixture(t, DataRedirect)
	create := f.bearer("storage.create:/t storage.read:/t")
	f.as(root, "MKCOL", "/t", nil, nil).want(t, "MKCOL", 201, "")
	f.as(root, "PUT", "/t/a", nil, []byte("a")).want(t, "PUT", 201, "")
	f.as(root, "PUT", "/t/b", nil, []byte("b")).want(t, "PUT", 201, "")
	before := f.snapshot()
	f.as(create, "PUT", "/t/a", nil, []byte("x")).want(t, "PUT over a file", 403, "PUT needs modify on /t/a")
	f.as(create, "COPY", "/t/a", map[string]string{"Destination": "/t/b"}, nil).want(t, "COPY onto a file", 403, "COPY needs modify on /t/b")
	f.as(create, "MOVE", "/t/a", map[string]string{"Destination": "/t/b"}, nil).want(t, "MOVE onto a file", 403, "MOVE needs modify on /t/b")
	f.as(create, "DELETE", "/t/a", nil, nil).want(t, "DELETE", 403, "DELETE needs modify")
	if after := f.snapshot(); after != before {
		t.Fatalf("refusals changed the namespace")
	}
	f.as(create, "COPY", "/t/a", map[string]string{"Destination": "/t/c"}, nil).want(t, "COPY to a new name", 201, "")
	f.as(create, "PUT", "/t/d", nil, []byte("d")).want(t, "PUT new", 201, "")
	// A capability token may make the parents of its scope path.
	deep := f.bearer("storage.create:/t/x/y/z")
	f.as(deep, "MKCOL", "/t/x", nil, nil).want(t, "MKCOL parent of the scope", 201, "")
	f.as(deep, "MKCOL", "/t/x/y", nil, nil).want(t, "MKCOL parent of the scope", 201, "")
	f.as(deep, "MKCOL", "/t/x/w", nil, nil).want(t, "MKCOL beside the scope", 403, "")
	f.as(deep, "PUT", "/t/x/y/z", nil, []byte("z")).want(t, "PUT at the scope", 201, "")
}

// TestAuthBadCredentials: a bad credential is refused even where
// anonymous may read, with error="invalid_token" after a bad token, and
// a stale or foreign token never counts.
func TestAuthBadCredentials(t *testing.T) {
	f := newAuthFixture(t, DataRedirect, rules.Rule{Path: "/pub", Who: "anonymous", Rights: []string{"read"}})
	f.as(root, "MKCOL", "/pub", nil, nil).want(t, "MKCOL", 201, "")
	f.as("", "PROPFIND", "/pub", map[string]string{"Depth": "1"}, nil).want(t, "anonymous listing /pub", 207, "")
	f.as("", "MKCOL", "/pub/x", nil, nil).want(t, "anonymous MKCOL", 401, "anonymous")
	expired := f.is.WLCG("tester", testAudience, "storage.read:/")
	expired["exp"], expired["iat"], expired["nbf"] = int64(1000), int64(900), int64(900)
	otherAud := f.is.WLCG("tester", "https://elsewhere.example", "storage.read:/")
	for name, cred := range map[string]string{
		"garbage":        "Bearer abc.def.ghi",
		"expired":        "Bearer " + f.is.Mint(t, expired),
		"other audience": "Bearer " + f.is.Mint(t, otherAud),
		"alg none":       "Bearer " + f.is.MintNone(t, f.is.SigningKid(), f.is.WLCG("tester", testAudience, "storage.read:/")),
	} {
		r := f.as(cred, "HEAD", "/pub", nil, nil)
		r.want(t, name, 401, "")
		if ch := strings.Join(r.h.Values("WWW-Authenticate"), "|"); !strings.Contains(ch, `error="invalid_token"`) {
			t.Errorf("%s: challenges %q", name, ch)
		}
	}
	f.as(basicAuth("nobody", "x"), "PROPFIND", "/pub", map[string]string{"Depth": "0"}, nil).want(t, "unknown user", 401, "wrong user name or password")
	f.as("Negotiate abc", "PROPFIND", "/pub", map[string]string{"Depth": "0"}, nil).want(t, "other scheme", 401, "unsupported")
	s := f.auth.Stats()
	if s[1][1] < 4 || s[2][1] < 1 || s[0][0] < 1 || s[0][2] < 1 {
		t.Errorf("auth stats %v: want bearer/invalid ≥ 4, basic/invalid ≥ 1, anonymous ok and denied", s)
	}
}

// TestAuthBasicInClear: Basic credentials are taken over TLS or from
// loopback only (the decision md makes per connection; a non-loopback
// client is simulated by the request's remote address).
func TestAuthBasicInClear(t *testing.T) {
	f := newAuthFixture(t, DataRedirect)
	f.as(root, "MKCOL", "/t", nil, nil).want(t, "MKCOL", 201, "")
	h := f.md.Handler()
	for _, tc := range []struct {
		remote string
		status int
	}{{"127.0.0.1", 207}, {"::1", 207}, {"192.0.2.7", 401}, {"2001:db8::1", 401}} {
		var ctx fasthttp.RequestCtx
		ctx.Init(&fasthttp.Request{}, &net.TCPAddr{IP: net.ParseIP(tc.remote), Port: 40000}, nil)
		ctx.Request.Header.SetMethod("PROPFIND")
		ctx.Request.SetRequestURI("/t")
		ctx.Request.Header.Set("Depth", "0")
		ctx.Request.Header.Set("Authorization", root)
		h(&ctx)
		if got := ctx.Response.StatusCode(); got != tc.status {
			t.Errorf("Basic from %s: %d %s, want %d", tc.remote, got, ctx.Response.Body(), tc.status)
		}
		if tc.status == 401 {
			if !strings.Contains(string(ctx.Response.Body()), "needs https") {
				t.Errorf("Basic from %s: reason %q", tc.remote, ctx.Response.Body())
			}
			// No Basic challenge over a connection that may not carry it.
			if ch := string(ctx.Response.Header.Peek("WWW-Authenticate")); strings.Contains(ch, "Basic") {
				t.Errorf("Basic from %s: challenge %q", tc.remote, ch)
			}
		}
	}
}

// rawRequest sends head (a request without its body) on a new connection
// and returns what md answers before any body is sent.
func rawRequest(t *testing.T, addr, head string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte(head)); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	var b strings.Builder
	for {
		line, err := r.ReadString('\n')
		b.WriteString(line)
		if err != nil || line == "\r\n" {
			return b.String()
		}
	}
}

// TestAuthExpect: a request waiting for 100 Continue is refused before md
// answers the expectation (no 100 Continue, no 307), its body never sent.
func TestAuthExpect(t *testing.T) {
	f := newAuthFixture(t, DataRedirect)
	f.as(root, "MKCOL", "/t", nil, nil).want(t, "MKCOL", 201, "")
	f.as(root, "PUT", "/t/old", nil, []byte("old")).want(t, "PUT", 201, "")
	addr := strings.TrimPrefix(f.url, "http://")
	before := f.snapshot()
	put := func(path, cred string) string {
		h := "PUT " + path + " HTTP/1.1\r\nHost: md\r\nContent-Length: 1000000\r\nExpect: 100-continue\r\n"
		if cred != "" {
			h += "Authorization: " + cred + "\r\n"
		}
		return rawRequest(t, addr, h+"\r\n")
	}
	create := f.bearer("storage.create:/t")
	for _, tc := range []struct {
		name, path, cred, status string
	}{
		{"anonymous", "/t/new", "", "401"},
		{"read token", "/t/new", f.bearer("storage.read:/t"), "403"},
		{"create token over a file", "/t/old", create, "403"},
		{"wrong password", "/t/new", basicAuth("alice", "nope"), "401"},
	} {
		got := put(tc.path, tc.cred)
		if !strings.HasPrefix(got, "HTTP/1.1 "+tc.status) || strings.Contains(got, "100 Continue") {
			t.Errorf("%s: got\n%s", tc.name, got)
		}
		if tc.status == "401" && !strings.Contains(strings.ToLower(got), "www-authenticate: bearer") {
			t.Errorf("%s: no challenge\n%s", tc.name, got)
		}
	}
	// PROPPATCH waiting for 100 Continue is refused just as early.
	got := rawRequest(t, addr, "PROPPATCH /t/old HTTP/1.1\r\nHost: md\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n")
	if !strings.HasPrefix(got, "HTTP/1.1 401") {
		t.Errorf("PROPPATCH with Expect, anonymous: got\n%s", got)
	}
	if after := f.snapshot(); after != before {
		t.Fatalf("refusals changed the namespace")
	}
	if got := put("/t/new", create); !strings.HasPrefix(got, "HTTP/1.1 307") || !strings.Contains(got, "Location: ") {
		t.Errorf("create token, new file: got\n%s", got)
	}
}

// TestMacaroonRequest: gfal2's macaroon request gets a prompt 415 and is
// never taken for an upload.
func TestMacaroonRequest(t *testing.T) {
	f := newAuthFixture(t, DataAuto)
	f.as(root, "MKCOL", "/t", nil, nil).want(t, "MKCOL", 201, "")
	before := f.snapshot()
	body := []byte(`{"caveats":["activity:DOWNLOAD,LIST"],"validity":"PT30M"}`)
	for _, ct := range []string{"application/macaroon-request", "Application/Macaroon-Request; charset=utf-8"} {
		f.as(f.bearer("storage.read:/t"), "POST", "/t/f", map[string]string{"Content-Type": ct}, body).want(t, "macaroon request "+ct, 415, "macaroons are not supported")
	}
	f.as(root, "POST", "/t/f", map[string]string{"Content-Type": "application/octet-stream"}, body).want(t, "other POST", 405, "")
	if after := f.snapshot(); after != before {
		t.Fatalf("a POST changed the namespace")
	}
}

// TestRequestID: X-Request-Id is echoed (sanitized, bounded) or made.
func TestRequestID(t *testing.T) {
	f := newAuthFixture(t, DataRedirect)
	f.as(root, "MKCOL", "/t", nil, nil).want(t, "MKCOL", 201, "")
	for _, tc := range []struct{ sent, want string }{
		{"abc-123", "abc-123"},
		{"a b\"c{d}", "a_b_c_d_"},
		{strings.Repeat("x", 100), strings.Repeat("x", maxRequestID)},
	} {
		r := f.as("", "HEAD", "/t", map[string]string{"X-Request-Id": tc.sent}, nil)
		if got := r.h.Get("X-Request-Id"); got != tc.want {
			t.Errorf("sent %q: echoed %q, want %q", tc.sent, got, tc.want)
		}
	}
	a := f.as("", "HEAD", "/t", nil, nil).h.Get("X-Request-Id")
	b := f.as(root, "HEAD", "/t", nil, nil).h.Get("X-Request-Id")
	if a == "" || b == "" || a == b {
		t.Errorf("generated ids %q, %q", a, b)
	}
	if !strings.Contains(f.logs.String(), `"id":"`+b+`"`) {
		t.Errorf("the access log does not have id %s", b)
	}
}

// TestSignedURLPrincipal: the data-server URL md redirects to names the
// principal, under the signature, and carries md's request id; it is
// enough on its own (curl drops Authorization on a redirect), and the
// data server logs who it was for.
func TestSignedURLPrincipal(t *testing.T) {
	f := newAuthFixture(t, DataRedirect)
	tok := f.bearer("storage.read:/t storage.modify:/t")
	f.as(root, "MKCOL", "/t", nil, nil).want(t, "MKCOL", 201, "")
	data := bytes.Repeat([]byte("signed "), 2000) // not inline
	r := f.as(tok, "PUT", "/t/big", map[string]string{"X-Request-Id": "put-1"}, data)
	r.want(t, "PUT", 307, "")
	loc, err := url.Parse(r.h.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	who := "token:tester@" + f.is.URL
	if q := loc.Query(); q.Get(sign.ParamPrincipal) != who || q.Get(wire.ParamRequestID) != "put-1" {
		t.Fatalf("PUT redirect %s: want who=%s rid=put-1", loc, who)
	}
	f.do("PUT", loc.String(), nil, data).want(t, "PUT to the data server without credentials", 201, "")
	r = f.as(tok, "GET", "/t/big", nil, nil)
	r.want(t, "GET", 302, "")
	if !strings.Contains(r.h.Get("Location"), "who="+url.QueryEscape(who)) {
		t.Fatalf("GET redirect %s", r.h.Get("Location"))
	}
	if got := f.do("GET", r.h.Get("Location"), nil, nil); got.status != 200 || got.body != string(data) {
		t.Fatalf("GET from the data server: %d", got.status)
	}
	logs := f.dsLogs.String()
	for _, want := range []string{"id=put-1 principal=" + who + " method=PUT", "principal=" + who + " method=GET"} {
		if !strings.Contains(logs, want) {
			t.Errorf("data server log lacks %q:\n%s", want, logs)
		}
	}
	// In proxy mode md makes the signed request itself, for the principal.
	f.md.opts.DataMode = DataProxy
	if got := f.as(tok, "GET", "/t/big", nil, nil); got.status != 200 || got.body != string(data) {
		t.Fatalf("proxied GET: %d", got.status)
	}
}

// TestAuthLogsNoSecrets: tokens, passwords, cookies and signatures reach
// neither md's access and audit lines nor the data server's, whatever
// the request and its answer; every line names its principal.
func TestAuthLogsNoSecrets(t *testing.T) {
	f := newAuthFixture(t, DataRedirect)
	token := f.is.Mint(t, f.is.WLCG("tester", testAudience, "storage.read:/t storage.modify:/t"))
	tok := "Bearer " + token
	alice := basicAuth("alice", alicePassword)
	cookie := map[string]string{"Cookie": "session=COOKIEVALUE"}
	f.as(root, "MKCOL", "/t", nil, nil).want(t, "MKCOL", 201, "")
	data := bytes.Repeat([]byte("x"), 10000)
	var sigs []string
	for _, cred := range []string{tok, alice} {
		r := f.as(cred, "PUT", "/t/f?sig=QUERYSIG&token="+token, cookie, data)
		r.want(t, "PUT", 307, "")
		sigs = append(sigs, mustQuery(t, r.h.Get("Location")).Get(sign.ParamSig))
		f.do("PUT", r.h.Get("Location"), map[string]string{"Authorization": cred}, data).want(t, "PUT data", 201, "")
		r = f.as(cred, "GET", "/t/f", cookie, nil)
		sigs = append(sigs, mustQuery(t, r.h.Get("Location")).Get(sign.ParamSig))
		f.do("GET", r.h.Get("Location"), map[string]string{"Authorization": cred}, nil).want(t, "GET data", 200, "")
		f.as(cred, "PROPFIND", "/t", map[string]string{"Depth": "1"}, nil).want(t, "PROPFIND", 207, "")
		f.as(cred, "DELETE", "/t/f", nil, nil).want(t, "DELETE", 204, "")
	}
	f.as(basicAuth("alice", "WRONGPASSWORD"), "HEAD", "/t", nil, nil).want(t, "wrong password", 401, "")
	f.as("Bearer "+token+"x", "HEAD", "/t", nil, nil).want(t, "bad token", 401, "")
	all := f.logs.String() + f.dsLogs.String()
	for _, leak := range append([]string{token, alicePassword, base64.StdEncoding.EncodeToString([]byte("alice:" + alicePassword)),
		"WRONGPASSWORD", "COOKIEVALUE", "QUERYSIG", "Bearer", "Basic "}, sigs...) {
		if strings.Contains(all, leak) {
			t.Errorf("a log holds %q", leak)
		}
	}
	if n := strings.Count(all, `"principal":"-","method":"HEAD","path":"/t","status":401`); n != 2 {
		t.Errorf("%d access lines name the refused credentials' sender \"-\", want 2 (a wrong password, a bad token):\n%s", n, all)
	}
	for _, want := range []string{`"principal":"user:alice"`, `"principal":"token:tester@` + f.is.URL, `"msg":"audit"`, "principal=user:alice method=PUT", `"path":"/t/f"`} {
		if !strings.Contains(all, want) {
			t.Errorf("the logs lack %s:\n%s", want, all)
		}
	}
}

// TestAuditNamesTheOtherSide: the audit line of a MOVE or COPY names its
// destination; that of any other write names none.
func TestAuditNamesTheOtherSide(t *testing.T) {
	f := newAuthFixture(t, DataRedirect)
	f.as(root, "MKCOL", "/t", nil, nil).want(t, "MKCOL", 201, "")
	f.as(root, "PUT", "/t/a", nil, []byte("hi")).want(t, "PUT", 201, "")
	f.as(root, "MOVE", "/t/a", map[string]string{"Destination": f.url + "/t/b"}, nil).want(t, "MOVE", 201, "")
	f.as(root, "COPY", "/t/b", map[string]string{"Destination": "/t/c"}, nil).want(t, "COPY", 201, "")
	want := map[string]string{"MKCOL": "", "PUT": "", "MOVE": "/t/b", "COPY": "/t/c"}
	seen := 0
	for _, line := range strings.Split(f.logs.String(), "\n") {
		var l struct{ Msg, Method, Destination, Source string }
		if json.Unmarshal([]byte(line), &l) != nil || l.Msg != "audit" {
			continue
		}
		seen++
		if dst, ok := want[l.Method]; !ok || l.Destination != dst || l.Source != "" {
			t.Errorf("audit line %s: destination %q, source %q; want destination %q", line, l.Destination, l.Source, dst)
		}
	}
	if seen != len(want) {
		t.Errorf("%d audit lines, want %d:\n%s", seen, len(want), f.logs.String())
	}
}

func mustQuery(t *testing.T, u string) url.Values {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil || p.RawQuery == "" {
		t.Fatalf("not a signed URL: %q", u)
	}
	return p.Query()
}
