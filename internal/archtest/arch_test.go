// Package archtest holds the tests that keep the package layout's rules:
// what each layer may import (README "Architecture"), and how large md
// may grow. It has no code.
package archtest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// rules: a package (with "/...": and its subpackages) must not depend,
// directly or not, on any of the listed ones ("/...": that package and
// its subpackages; else that package alone).
var rules = []struct {
	pkg   string
	never []string
}{
	{"shoal", []string{"shoal/..."}}, // the vocabulary imports no project package
	{"shoal/sign", []string{"shoal/md/...", "shoal/catalog/...", "shoal/cache/...", "shoal/gw/...", "shoal/ec/...", "shoal/diskserver/...", "shoal/wire/...", "shoal/auth/...", "shoal/cmd/..."}},
	{"shoal/md/...", []string{"shoal/gw/...", "shoal/ec/...", "shoal/diskserver/...", "shoal/jobs/...", "shoal/catalog/...", "shoal/cmd/..."}},
	{"shoal/catalog/...", []string{"shoal/md/...", "shoal/cache/...", "shoal/gw/...", "shoal/ec/...", "shoal/diskserver/..."}},
	{"shoal/cache/...", []string{"shoal/md/...", "shoal/catalog", "shoal/gw/...", "shoal/ec/...", "shoal/diskserver/..."}},
	{"shoal/ec/...", []string{"shoal/md/...", "shoal/catalog/...", "shoal/cache/...", "shoal/gw/...", "shoal/diskserver/...",
		"github.com/valyala/fasthttp", "net/http"}},
	{"shoal/gw/...", []string{"shoal/md/...", "shoal/catalog/...", "shoal/cache/...", "shoal/diskserver"}},
	{"shoal/diskserver/...", []string{"shoal/md/...", "shoal/catalog/...", "shoal/cache/...", "shoal/gw/...", "shoal/ec/..."}},
	{"shoal/wire/...", []string{"shoal/md/...", "shoal/catalog/...", "shoal/cache/...", "shoal/gw/...", "shoal/ec/...", "shoal/diskserver/..."}},
	{"shoal/jobs/...", []string{"shoal/md/...", "shoal/catalog/...", "shoal/cache/...", "shoal/gw", "shoal/diskserver"}},
	{"shoal/auth/...", []string{"shoal/md/...", "shoal/catalog/...", "shoal/cache/...", "shoal/gw/...", "shoal/ec/...", "shoal/diskserver/..."}},
	{"shoal/placement/...", []string{"shoal/md/...", "shoal/catalog/...", "shoal/cache/...", "shoal/gw/...", "shoal/ec/...", "shoal/diskserver/...", "shoal/jobs/...", "shoal/auth/...", "shoal/tpc/...", "shoal/cmd/..."}},
	{"shoal/internalapi/...", []string{"shoal/md/...", "shoal/catalog/...", "shoal/cache/...", "shoal/gw/...", "shoal/ec/...", "shoal/diskserver/...", "shoal/jobs/...", "shoal/auth/...", "shoal/tpc/...", "shoal/cmd/..."}},
	{"shoal/davlock/...", []string{"shoal/md/...", "shoal/catalog/...", "shoal/cache/...", "shoal/gw/...", "shoal/ec/...", "shoal/diskserver/...", "shoal/jobs/...", "shoal/auth/...", "shoal/tpc/...", "shoal/placement/...", "shoal/internalapi/...", "shoal/cmd/..."}},
	{"shoal/internal/accesslog", []string{"shoal/md/...", "shoal/catalog/...", "shoal/cache/...", "shoal/gw/...", "shoal/ec/...", "shoal/diskserver/...", "shoal/jobs/...", "shoal/cmd/..."}},
	{"shoal/tpc/...", []string{"shoal/md/...", "shoal/catalog/...", "shoal/cache/...", "shoal/gw/...", "shoal/ec/...", "shoal/diskserver/...", "shoal/jobs/...", "shoal/wire/...", "shoal/sign/..."}},
}

// rootOnly are packages that may depend on no project package but the
// root vocabulary, not even the shared internals: pure protocol code,
// and the start-up settling md does over the root interfaces alone.
var rootOnly = []string{"shoal/dav/...", "shoal/internal/settle"}

// matches reports whether package p is named by pattern (see rules).
func matches(p, pattern string) bool {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return p == base || strings.HasPrefix(p, base+"/")
	}
	return p == pattern
}

// TestImportRules fails when a package depends on what it must not
// (DESIGN: md talks to data servers and gws over HTTP only; the catalog
// and the cache know nothing of md; the root is the vocabulary).
func TestImportRules(t *testing.T) {
	for _, r := range rules {
		for _, d := range deps(t, r.pkg) {
			if matches(d, r.pkg) || strings.HasPrefix(d, "shoal/internal/") {
				continue // itself, its subpackages, and the shared internals
			}
			for _, n := range r.never {
				if matches(d, n) {
					t.Errorf("%s depends on %s (must not depend on %s)", r.pkg, d, n)
				}
			}
		}
	}
	for _, pkg := range rootOnly {
		for _, d := range deps(t, pkg) {
			if !matches(d, pkg) && d != "shoal" && matches(d, "shoal/...") {
				t.Errorf("%s depends on %s (may depend on the root package alone)", pkg, d)
			}
		}
	}
}

// deps lists the packages pkg depends on, directly or not, itself
// included.
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go list %s: %v\n%s", pkg, err, out)
	}
	return strings.Fields(string(out))
}

// mdMaxLines is the size md must stay under, in non-test Go lines (issue
// 13: the frontend is HTTP and WebDAV glue; protocol, placement, the
// internal API, locks and logs are packages of their own).
const mdMaxLines = 3500

// TestMDSize fails when md grows to mdMaxLines non-test lines: move a
// concern out (see README "Architecture") rather than raise the bound.
func TestMDSize(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "md", "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("md's sources: %v %v", files, err)
	}
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		n += bytes.Count(b, []byte("\n"))
	}
	t.Logf("md: %d non-test lines (bound %d)", n, mdMaxLines)
	if n >= mdMaxLines {
		t.Errorf("md has %d non-test lines, the bound is %d: move a concern into a package of its own", n, mdMaxLines)
	}
}
