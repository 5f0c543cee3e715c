package e2e

import (
	"strings"
	"testing"

	"shoal/internal/testsvc"
)

// With its MariaDB stopped (connections refused) or hung (SIGSTOPped:
// connections open, nothing answers), a real `shoal md` answers every
// namespace request 503 with Retry-After, the hung case once
// catalog.call_timeout has passed, and none of them changes anything;
// when MariaDB is back the same md process serves again (no restart).
func TestMDMariaDBDown(t *testing.T) {
	for _, outage := range []struct {
		name      string
		stop, end func(*testsvc.MariaDBProcess)
		why       string // in every 503's body
	}{
		{"stopped", (*testsvc.MariaDBProcess).Stop, (*testsvc.MariaDBProcess).Start, "unavailable"},
		{"hung", (*testsvc.MariaDBProcess).Pause, (*testsvc.MariaDBProcess).Resume, "did not answer within 1s (catalog.call_timeout)"},
	} {
		t.Run(outage.name, func(t *testing.T) {
			testMDCatalogOutage(t, outage.stop, outage.end, outage.why)
		})
	}
}

func testMDCatalogOutage(t *testing.T, stop, end func(*testsvc.MariaDBProcess), why string) {
	maria := testsvc.StartMariaDB(t)
	secret := writeSecret(t, "k1 0123456789abcdef0123456789abcdef\n")
	// No cache tier: every request reaches SQL. A short call timeout, so
	// that the hung case ends in the test's time.
	md := startMD(t, maria.DSN, "", secret, []string{"SHOAL_CACHE_L1=off", "SHOAL_MD_DATA_MODE=proxy",
		"SHOAL_CATALOG_CALL_TIMEOUT=1s"})
	u := md.URL
	for _, r := range []struct{ method, path, body string }{
		{"MKCOL", "/d/", ""}, {"MKCOL", "/d/sub/", ""}, {"PUT", "/d/f", "first"}, {"PUT", "/d/sub/g", "second"},
	} {
		if got := do(r.method, u+r.path, r.body); got.status != 201 {
			t.Fatalf("%s %s = %v", r.method, r.path, got)
		}
	}
	snapshot := func() string {
		var b strings.Builder
		for _, dir := range []string{"/", "/d/", "/d/sub/"} {
			got := do("PROPFIND", u+dir, "", "Depth", "1")
			if got.status != 207 {
				t.Fatalf("PROPFIND %s = %v", dir, got)
			}
			b.WriteString(got.body)
		}
		for _, f := range []string{"/d/f", "/d/sub/g"} {
			got := do("GET", u+f, "")
			b.WriteString(f + "=" + got.String() + "\n")
		}
		return b.String()
	}
	before := snapshot()

	stop(maria)
	defer end(maria) // idempotent; lets the cleanup stop a hung server
	for _, r := range []struct {
		method, path, body string
		header             []string
	}{
		{"HEAD", "/d/f", "", nil},
		{"HEAD", "/nope", "", nil},
		{"GET", "/d/f", "", nil},
		{"PROPFIND", "/d/", "", []string{"Depth", "1"}},
		{"PUT", "/d/new", "x", nil},
		{"PUT", "/d/f", "overwritten", nil},
		{"PUT", "/d/f2", "x", []string{"If-None-Match", "*"}},
		{"MKCOL", "/e/", "", nil},
		{"DELETE", "/d/", "", nil},
		{"MOVE", "/d/", "", []string{"Destination", u + "/moved/"}},
		{"COPY", "/d/", "", []string{"Destination", u + "/copied/"}},
		{"PROPPATCH", "/d/f", `<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:z"><D:set><D:prop><Z:a>1</Z:a></D:prop></D:set></D:propertyupdate>`, nil},
	} {
		got := do(r.method, u+r.path, r.body, r.header...)
		if got.status != 503 || got.header.Get("Retry-After") == "" {
			t.Errorf("%s %s with MariaDB out = %v (Retry-After %q), want 503 with Retry-After",
				r.method, r.path, got, got.header.Get("Retry-After"))
		}
		if r.method != "HEAD" && !strings.Contains(got.body, why) {
			t.Errorf("%s %s with MariaDB out: body %q does not say %q", r.method, r.path, got.body, why)
		}
	}
	if got := do("GET", u+"/.shoal/healthz", ""); got.status != 503 {
		t.Errorf("healthz with MariaDB out = %v, want 503", got)
	}

	end(maria)
	if after := snapshot(); after != before {
		t.Errorf("requests refused while MariaDB was down changed the namespace:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	for _, r := range []struct{ method, path, body string }{
		{"MKCOL", "/e/", ""}, {"PUT", "/d/new", "x"},
	} {
		if got := do(r.method, u+r.path, r.body); got.status != 201 {
			t.Errorf("%s %s after MariaDB restarted = %v, want 201", r.method, r.path, got)
		}
	}
	if got := do("HEAD", u+"/d/new", ""); got.status != 200 {
		t.Errorf("HEAD /d/new after restart = %v", got)
	}
	if got := do("GET", u+"/.shoal/healthz", ""); got.status != 200 {
		t.Errorf("healthz after restart = %v, want 200", got)
	}
}
