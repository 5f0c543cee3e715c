package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCurlRedirect puts and gets files with curl -L through md's 307/302
// redirects in redirect mode (with all.local_data off, as in a cluster:
// md does not serve its own data server's files), bytes compared: an inline-sized file, a
// 1 MiB random file, and an upload with Expect: 100-continue that must
// get its 307 before sending the body (md never sends 100 Continue first).
func TestCurlRedirect(t *testing.T) {
	curl := need(t, "curl")
	n := startShoal(t, "", "SHOAL_MD_DATA_MODE=redirect", "SHOAL_ALL_LOCAL_DATA=false")
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

// TestCurlAuto: in the default auto mode (all.local_data off, as in a
// cluster) a PUT with Expect: 100-continue is redirected before its body,
// a PUT without it is streamed through md (curl without -L succeeds), and
// GET is a 302 for curl.
func TestCurlAuto(t *testing.T) {
	curl := need(t, "curl")
	n := startShoal(t, "", "SHOAL_ALL_LOCAL_DATA=false")
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

// TestCurlLocal: with shoal all's default all.local_data, in every data
// mode, curl without -L puts (with and without Expect: 100-continue,
// chunked) and gets files straight from md — 201/204, never a 307 or a
// 302 — bytes compared, Range and HEAD included.
func TestCurlLocal(t *testing.T) {
	curl := need(t, "curl")
	for _, mode := range []string{"redirect", "auto", "proxy"} {
		t.Run(mode, func(t *testing.T) {
			n := startShoal(t, "", "SHOAL_MD_DATA_MODE="+mode)
			dir := t.TempDir()
			src, want := randomFile(t, dir, "local.bin", 700<<10)
			for _, put := range []struct {
				name   string
				args   []string
				status string
			}{
				{"expect", []string{"-H", "Expect: 100-continue"}, "201"},
				{"no expect", []string{"-H", "Expect:"}, "204"},
				{"chunked", []string{"-H", "Transfer-Encoding: chunked"}, "204"},
			} {
				args := append([]string{"-sS", "--fail-with-body", "-o", "/dev/null", "-w", "%{http_code}"}, put.args...)
				out, code := run(t, dir, nil, curl, append(args, "-T", src, n.URL+"/local.bin")...)
				if code != 0 || out != put.status {
					t.Fatalf("PUT (%s) without -L: exit %d, %q; want %s from md itself", put.name, code, out, put.status)
				}
				got := filepath.Join(dir, "local.got")
				out, code = run(t, dir, nil, curl, "-sS", "--fail-with-body", "-o", got, "-w", "%{http_code}", n.URL+"/local.bin")
				if code != 0 || out != "200" {
					t.Fatalf("GET without -L: exit %d, %q; want 200 from md itself", code, out)
				}
				checkFile(t, got, want)
			}
			out, code := run(t, dir, nil, curl, "-sS", "--fail-with-body", "-r", "1000-1999", "-o", filepath.Join(dir, "range.got"), "-w", "%{http_code}", n.URL+"/local.bin")
			if code != 0 || out != "206" {
				t.Fatalf("GET -r: exit %d, %q", code, out)
			}
			checkFile(t, filepath.Join(dir, "range.got"), want[1000:2000])
			out, code = run(t, dir, nil, curl, "-sS", "-I", n.URL+"/local.bin")
			if code != 0 || !strings.Contains(out, "Content-Length: 716800") {
				t.Errorf("HEAD: exit %d:\n%s", code, out)
			}
		})
	}
}
