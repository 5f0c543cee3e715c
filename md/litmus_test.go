package md

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestLitmus runs the litmus WebDAV suite (Debian package litmus) against
// md in proxy mode: the basic, copymove, props and http groups must pass
// with no failures.
func TestLitmus(t *testing.T) {
	bin, err := exec.LookPath("litmus")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("litmus is not installed")
		}
		t.Skip("litmus is not installed")
	}
	e := newEnv(t, DataProxy)
	e.do("MKCOL", "/litmus", nil, nil).want(t, "MKCOL", 201, "")
	cmd := exec.Command(bin, e.url+"/litmus/")
	cmd.Env = append(os.Environ(), "TESTS=basic copymove props locks http", "HTDOCS=/usr/share/litmus/htdocs")
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	t.Logf("litmus:\n%s", out)
	if err != nil {
		t.Fatalf("litmus failed: %v", err)
	}
	if strings.Contains(string(out), "FAIL") {
		t.Fatal("litmus reports failures")
	}
}
