package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCurlRedirect puts and gets files with curl -L through md's 307/302
// redirects in redirect mode, bytes compared: an inline-sized file, a
// 1 MiB random file, and an upload with Expect: 100-continue that must
// get its 307 before sending the body (md never sends 100 Continue first).
func TestCurlRedirect(t *testing.T) {
	curl := need(t, "curl")
	n := startShoal(t, "", "SHOAL_MD_DATA_MODE=redirect")
	dir := t.TempDir()

	for _, tc := range []struct {
		name string
		size int
	}{
		{"small.bin", 100},
		{"edge.bin", 4096},
		{"onemeg.bin", 1 << 20},
		{"empty.bin", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, want := randomFile(t, dir, tc.name, tc.size)
			out, code := run(t, dir, nil, curl, "-sS", "-L", "--fail-with-body", "-T", src, n.URL+"/"+tc.name)
			if code != 0 {
				t.Fatalf("curl -L -T: exit %d: %s", code, out)
			}
			got := filepath.Join(dir, tc.name+".got")
			out, code = run(t, dir, nil, curl, "-sS", "-L", "--fail-with-body", "-o", got, n.URL+"/"+tc.name)
			if code != 0 {
				t.Fatalf("curl -L GET: exit %d: %s", code, out)
			}
			checkFile(t, got, want)
		})
	}

	t.Run("get is a 302 to the data server", func(t *testing.T) {
		out, code := run(t, dir, nil, curl, "-sS", "-o", "/dev/null", "-w", "%{http_code} %{redirect_url}", n.URL+"/onemeg.bin")
		if code != 0 {
			t.Fatalf("curl: exit %d: %s", code, out)
		}
		status, location, _ := strings.Cut(out, " ")
		if status != "302" || !strings.HasPrefix(location, n.DiskURL+"/") {
			t.Errorf("GET without -L: got %q %q, want 302 to %s/…", status, location, n.DiskURL)
		}
	})

	t.Run("expect 100-continue gets its 307 before the body", func(t *testing.T) {
		src, want := randomFile(t, dir, "expect.bin", 256<<10)
		out, code := run(t, dir, nil, curl, "-sS", "-v", "-L", "--fail-with-body", "-H", "Expect: 100-continue", "-T", src, n.URL+"/expect.bin")
		if code != 0 {
			t.Fatalf("curl -T with Expect: exit %d: %s", code, out)
		}
		first := strings.Index(out, "< HTTP/1.1 ")
		if first < 0 || !strings.HasPrefix(out[first:], "< HTTP/1.1 307") {
			t.Errorf("first response to an Expect: 100-continue PUT is not a 307:\n%s", out)
		}
		got := filepath.Join(dir, "expect.got")
		if out, code := run(t, dir, nil, curl, "-sS", "-L", "--fail-with-body", "-o", got, n.URL+"/expect.bin"); code != 0 {
			t.Fatalf("curl -L GET: exit %d: %s", code, out)
		}
		checkFile(t, got, want)
	})

	t.Run("overwrite", func(t *testing.T) {
		src, want := randomFile(t, dir, "over.bin", 300<<10)
		for range 2 {
			if out, code := run(t, dir, nil, curl, "-sS", "-L", "--fail-with-body", "-T", src, n.URL+"/small.bin"); code != 0 {
				t.Fatalf("curl -L -T overwrite: exit %d: %s", code, out)
			}
		}
		got := filepath.Join(dir, "over.got")
		if out, code := run(t, dir, nil, curl, "-sS", "-L", "--fail-with-body", "-o", got, n.URL+"/small.bin"); code != 0 {
			t.Fatalf("curl -L GET: exit %d: %s", code, out)
		}
		checkFile(t, got, want)
	})
}

// checkFile fails unless the file at path holds want.
func checkFile(t *testing.T, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s: got %d bytes, want %d (content differs)", filepath.Base(path), len(got), len(want))
	}
}

// TestCurlAuto: in the default auto mode a PUT with Expect: 100-continue
// is redirected before its body, a PUT without it is streamed through md
// (curl without -L succeeds), and GET is a 302 for curl.
func TestCurlAuto(t *testing.T) {
	curl := need(t, "curl")
	n := startShoal(t, "")
	dir := t.TempDir()
	src, want := randomFile(t, dir, "auto.bin", 512<<10)

	out, code := run(t, dir, nil, curl, "-sS", "-v", "-L", "--fail-with-body", "-H", "Expect: 100-continue", "-T", src, n.URL+"/expect.bin")
	if code != 0 {
		t.Fatalf("PUT with Expect: exit %d: %s", code, out)
	}
	if first := strings.Index(out, "< HTTP/1.1 "); first < 0 || !strings.HasPrefix(out[first:], "< HTTP/1.1 307") {
		t.Errorf("auto mode: first response to a PUT with Expect: 100-continue is not a 307:\n%s", out)
	}

	out, code = run(t, dir, nil, curl, "-sS", "--fail-with-body", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Expect:", "-T", src, n.URL+"/streamed.bin")
	if code != 0 || out != "201" {
		t.Fatalf("PUT without Expect, no -L: exit %d, status %q; want 201 streamed through md", code, out)
	}

	for _, name := range []string{"expect.bin", "streamed.bin"} {
		out, code := run(t, dir, nil, curl, "-sS", "-o", "/dev/null", "-w", "%{http_code}", n.URL+"/"+name)
		if code != 0 || out != "302" {
			t.Errorf("GET %s without -L: status %q, want 302", name, out)
		}
		got := filepath.Join(dir, name+".got")
		if out, code := run(t, dir, nil, curl, "-sS", "-L", "--fail-with-body", "-o", got, n.URL+"/"+name); code != 0 {
			t.Fatalf("GET -L %s: exit %d: %s", name, code, out)
		}
		checkFile(t, got, want)
	}
}
