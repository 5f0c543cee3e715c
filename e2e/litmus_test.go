package e2e

import (
	"regexp"
	"strings"
	"testing"
)

// litmusSummary matches litmus's per-suite summary line, e.g.
// "<- summary for `basic': of 16 tests run: 16 passed, 0 failed. 100.0%".
var litmusSummary = regexp.MustCompile("summary for `(\\w+)': of (\\d+) tests run: (\\d+) passed, (\\d+) failed")

// litmusFail matches a failed test line, e.g. " 7. put_get..... FAIL (reason)".
var litmusFail = regexp.MustCompile(`\d+\.\s+(\w+)\.*\s+FAIL\b[^\n]*`)

// TestLitmus runs the litmus WebDAV suites that shoal must pass (issue 2:
// basic, copymove, props, http; and locks, now that md speaks class 2)
// against shoal all in proxy mode, and in
// the default auto mode, which must serve litmus without configuration.
func TestLitmus(t *testing.T) {
	for _, mode := range []string{"proxy", "auto"} {
		t.Run(mode, func(t *testing.T) { testLitmus(t, mode) })
	}
}

func testLitmus(t *testing.T, mode string) {
	litmus := need(t, "litmus")
	curl := need(t, "curl")
	n := startShoal(t, "", "SHOAL_MD_DATA_MODE="+mode)

	// litmus works inside the collection it is given.
	if out, code := run(t, t.TempDir(), nil, curl, "-sS", "-o", "/dev/null", "-w", "%{http_code}", "-X", "MKCOL", n.URL+"/litmus/"); code != 0 || out != "201" {
		t.Fatalf("MKCOL /litmus/: curl exit %d, status %q", code, out)
	}
	suites := []string{"basic", "copymove", "props", "locks", "http"}
	out, code := run(t, t.TempDir(), []string{"TESTS=" + strings.Join(suites, " ")}, litmus, "--keep-going", n.URL+"/litmus/")
	t.Logf("litmus output:\n%s", out)

	ran := map[string]bool{}
	for _, m := range litmusSummary.FindAllStringSubmatch(out, -1) {
		ran[m[1]] = true
		if m[4] != "0" {
			t.Errorf("litmus %s: %s of %s tests failed", m[1], m[4], m[2])
		}
	}
	for _, s := range suites {
		if !ran[s] {
			t.Errorf("litmus suite %s did not run to its summary", s)
		}
	}
	for _, m := range litmusFail.FindAllStringSubmatch(out, -1) {
		t.Errorf("litmus FAIL: %s", strings.TrimSpace(m[0]))
	}
	if code != 0 {
		t.Errorf("litmus exit code %d", code)
	}
}
