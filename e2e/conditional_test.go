package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestConditionalCurl: the conditional request matrix with a real
// client's ETags — curl reads the ETag of a file, then If-Match with a
// stale or wrong one refuses PUT, DELETE and MOVE (412, file unchanged),
// the current one lets them through, and If-None-Match gives GET a 304.
// The finding: If-Match: "nope" was ignored (201/204).
func TestConditionalCurl(t *testing.T) {
	curl := need(t, "curl")
	n := startShoal(t, "")
	dir := t.TempDir()
	v1, _ := randomFile(t, dir, "v1", 20_000)
	v2, _ := randomFile(t, dir, "v2", 20_000)
	etagRE := regexp.MustCompile(`(?im)^etag:\s*(\S+)\s*$`)
	code := func(args ...string) string {
		out, _ := run(t, dir, nil, curl, append([]string{"-s", "-o", "/dev/null", "-w", "%{http_code}", "-L"}, args...)...)
		return strings.TrimSpace(out)
	}
	etag := func() string {
		out, _ := run(t, dir, nil, curl, "-s", "-I", n.URL+"/f")
		m := etagRE.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no ETag in HEAD /f:\n%s", out)
		}
		return m[1]
	}
	if c := code("-T", v1, n.URL+"/f"); c != "201" {
		t.Fatalf("PUT v1: %s", c)
	}
	e1 := etag()
	for _, c := range []struct {
		what string
		args []string
	}{
		{"PUT If-Match nope", []string{"-T", v2, "-H", `If-Match: "nope"`, n.URL + "/f"}},
		{"DELETE If-Match nope", []string{"-X", "DELETE", "-H", `If-Match: "nope"`, n.URL + "/f"}},
		{"MOVE If-Match nope", []string{"-X", "MOVE", "-H", `If-Match: "nope"`, "-H", "Destination: " + n.URL + "/g", n.URL + "/f"}},
		{"PUT If-None-Match current", []string{"-T", v2, "-H", "If-None-Match: " + e1, n.URL + "/f"}},
		{"PUT If-None-Match *", []string{"-T", v2, "-H", "If-None-Match: *", n.URL + "/f"}},
	} {
		if got := code(c.args...); got != "412" {
			t.Errorf("%s: %s, want 412", c.what, got)
		}
	}
	if e := etag(); e != e1 {
		t.Fatalf("refused requests changed the file: ETag %s, was %s", e, e1)
	}
	if got := code("-H", "If-None-Match: "+e1, n.URL+"/f"); got != "304" {
		t.Errorf("GET If-None-Match current: %s, want 304", got)
	}
	if got := code("-T", v2, "-H", "If-Match: "+e1, n.URL+"/f"); got != "204" {
		t.Errorf("PUT If-Match current: %s, want 204", got)
	}
	e2 := etag()
	if got := code("-T", v1, "-H", "If-Match: "+e1, n.URL+"/f"); got != "412" {
		t.Errorf("PUT If-Match the old ETag (a lost update): %s, want 412", got)
	}
	out, _ := run(t, dir, nil, curl, "-s", "-L", n.URL+"/f")
	if want, _ := os.ReadFile(v2); out != string(want) {
		t.Errorf("the file holds %d bytes, not v2", len(out))
	}
	if got := code("-X", "DELETE", "-H", "If-Match: "+e2, n.URL+"/f"); got != "204" {
		t.Errorf("DELETE If-Match current: %s, want 204", got)
	}
}

// TestShortKeyRefusedAtStart: a secret file with a verify-only key shorter
// than 16 bytes stops shoal at start, naming the key (the finding:
// verify-only keys could be a single byte).
func TestShortKeyRefusedAtStart(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	os.WriteFile(secret, []byte("k2 0123456789abcdef0123456789abcdef\nk1 x\n"), 0o600)
	out, code := run(t, dir, nil, shoalBin, "all", "--data", filepath.Join(dir, "data"), "--secret-file", secret,
		"--listen", "127.0.0.1:0", "--disk-listen", "127.0.0.1:0")
	if code == 0 || !strings.Contains(out, `"k1"`) || !strings.Contains(out, "16 bytes") {
		t.Errorf("shoal all with a 1-byte key: exit %d\n%s", code, out)
	}
}
