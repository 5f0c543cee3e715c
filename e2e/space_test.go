package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// mountTmpfs mounts a tmpfs of size (e.g. "8m") on a new directory and
// unmounts it at the end of the test; ok is false when this process may
// not mount (not root, or no mount(8)).
func mountTmpfs(t *testing.T, size string) (dir string, ok bool) {
	t.Helper()
	if os.Geteuid() != 0 {
		return "", false
	}
	dir = t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0700", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Logf("mount tmpfs: %v: %s", err, out)
		return "", false
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir, true
}

func freeBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Bavail) * int64(st.Bsize)
}

// put sends one PUT of data to md (proxy mode: md streams it to the data
// server); chunked sends it without a Content-Length.
func putBody(url string, data []byte, chunked bool) reply {
	var body io.Reader = bytes.NewReader(data)
	if chunked {
		body = io.MultiReader(body) // hides the length: Go sends it chunked
	}
	req, err := http.NewRequest("PUT", url, body)
	if err != nil {
		return reply{body: err.Error()}
	}
	if chunked {
		req.ContentLength = -1
	}
	resp, err := client.Do(req)
	if err != nil {
		return reply{body: err.Error()}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header, string(b)}
}

// TestDiskFull fills a data server's disk — an 8 MiB tmpfs when the test
// may mount one, else a disk.reserve that leaves the data directory's
// filesystem about 8 MiB — with PUTs of known length and chunked ones
// (which used to get past the reserve): once full, writes get 507 with
// DAV:sufficient-disk-space, the data server's healthz is 503 saying
// "disk full", its metrics say shoal_disk_full 1 and `shoal admin status`
// exits 1 naming it; nothing half-written is visible or left on disk;
// after files are deleted (and their objects collected), writes work
// again without a restart.
func TestDiskFull(t *testing.T) {
	need(t, "mount")
	data := t.TempDir()
	env := []string{"SHOAL_MD_DATA_MODE=proxy", "SHOAL_MD_URL_TTL=2s", "SHOAL_DISK_GARBAGE_INTERVAL=300ms", "SHOAL_DISK_HEARTBEAT=300ms"}
	disk, ok := mountTmpfs(t, "8m")
	if ok {
		t.Log("data directory on an 8 MiB tmpfs, disk.reserve 1MiB")
		env = append(env, "SHOAL_DISK_DATA="+disk, "SHOAL_DISK_RESERVE=1MiB")
	} else {
		disk = filepath.Join(data, "disk")
		if err := os.MkdirAll(disk, 0o700); err != nil {
			t.Fatal(err)
		}
		reserve := freeBytes(t, disk) - 8<<20
		t.Logf("no tmpfs (not root): disk.reserve %d leaves the data directory about 8 MiB", reserve)
		env = append(env, fmt.Sprintf("SHOAL_DISK_RESERVE=%d", reserve))
	}
	n := startShoal(t, data, env...)
	secret := filepath.Join(data, "secret")

	const size = 512 << 10
	var created []string
	full := 0
	for i := 0; i < 64 && full < 4; i++ {
		path := fmt.Sprintf("/f%02d", i)
		r := putBody(n.URL+path, bytes.Repeat([]byte{byte(i)}, size), i%2 == 1)
		switch {
		case r.status == 201:
			if full > 0 {
				t.Errorf("PUT %s: 201 after a 507 with nothing freed", path)
			}
			created = append(created, path)
		case r.status == 507:
			if !strings.Contains(r.body, "<D:sufficient-disk-space/>") {
				t.Errorf("PUT %s: 507 without DAV:sufficient-disk-space: %s", path, r.body)
			}
			full++
		default:
			t.Fatalf("PUT %s (chunked %v): %s, want 201 or 507", path, i%2 == 1, r)
		}
	}
	if full == 0 || len(created) == 0 {
		t.Fatalf("%d files created, %d refused: the disk never filled", len(created), full)
	}
	t.Logf("%d files of %d bytes created, then 507", len(created), size)

	// Operators see it.
	waitFor(t, 5*time.Second, "healthz saying disk full", func() bool {
		r := do("GET", n.DiskURL+"/.shoal/healthz", "")
		return r.status == 503 && strings.Contains(r.body, "disk full")
	})
	if m := do("GET", n.DiskURL+"/.shoal/metrics", ""); !strings.Contains(m.body, "shoal_disk_full{server=") || !strings.Contains(m.body, "} 1\n") {
		t.Errorf("metrics do not say the disk is full:\n%s", grepLines(m.body, "shoal_disk_"))
	}
	out, code := run(t, "", nil, shoalBin, "admin", "--md", n.URL, "--secret-file", secret, "status")
	if code != 1 || !strings.Contains(out, "disk full") {
		t.Errorf("admin status: exit %d, want 1 naming the full disk:\n%s", code, out)
	}

	// Nothing half-written: the listing is the created files, whole; the
	// data directory holds their objects and no temp file.
	list := do("PROPFIND", n.URL+"/", "", "Depth", "1")
	if got := strings.Count(list.body, "<D:getcontentlength>524288</D:getcontentlength>"); got != len(created) || strings.Count(list.body, "<D:response>") != len(created)+1 {
		t.Errorf("listing has %d whole files of %d created:\n%s", got, len(created), list.body)
	}
	if g := do("GET", n.URL+created[len(created)-1], ""); g.status != 200 || len(g.body) != size {
		t.Errorf("GET of the last file created: %d, %d bytes", g.status, len(g.body))
	}
	objects, temps := countFiles(t, filepath.Join(disk, "objects")), countFiles(t, filepath.Join(disk, "tmp"))
	if objects != len(created) || temps != 0 {
		t.Errorf("data directory: %d objects for %d files, %d temp files", objects, len(created), temps)
	}

	// Freed: delete half, their objects are collected, writes work again.
	for _, p := range created[:len(created)/2+1] {
		if r := do("DELETE", n.URL+p, ""); r.status != 204 {
			t.Fatalf("DELETE %s: %s", p, r)
		}
	}
	waitFor(t, 20*time.Second, "healthz ok again", func() bool {
		return do("GET", n.DiskURL+"/.shoal/healthz", "").status == 200
	})
	waitFor(t, 5*time.Second, "PUT 201 again", func() bool {
		return putBody(n.URL+"/again", make([]byte, size), true).status == 201
	})
}

// TestCatalogDiskFull fills the filesystem of an SQLite catalog (an 8 MiB
// tmpfs) and writes small (inline) files until one fails: it is a 507
// with DAV:sufficient-disk-space, never a 503; md's healthz is 503
// naming the catalog's disk, its metrics say shoal_catalog_disk_full 1;
// the file of the failed write is not visible; once the filler is
// removed, writes work again without a restart and healthz is ok.
func TestCatalogDiskFull(t *testing.T) {
	need(t, "mount")
	dir, ok := mountTmpfs(t, "8m")
	if !ok {
		if os.Getenv("CI") == "true" {
			t.Fatal("cannot mount a tmpfs (CI runs as root)")
		}
		t.Skip("cannot mount a tmpfs (not root)")
	}
	data := t.TempDir()
	n := startShoal(t, data, "SHOAL_CATALOG_DSN=sqlite:"+filepath.Join(dir, "catalog.db"), "SHOAL_DISK_HEARTBEAT=300ms")
	if r := do("MKCOL", n.URL+"/d", ""); r.status != 201 {
		t.Fatalf("MKCOL: %s", r)
	}
	// The filler takes what is left.
	filler := filepath.Join(dir, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			break
		}
	}
	f.Close()

	failed := ""
	for i := 0; i < 4000 && failed == ""; i++ {
		path := fmt.Sprintf("/d/f%04d", i)
		r := putBody(n.URL+path, bytes.Repeat([]byte{'x'}, 4000), false)
		switch r.status {
		case 201:
		case 507:
			if !strings.Contains(r.body, "<D:sufficient-disk-space/>") {
				t.Errorf("507 without DAV:sufficient-disk-space: %s", r.body)
			}
			failed = path
		default:
			t.Fatalf("PUT %s with the catalog's disk full: %s, want 201 or 507", path, r)
		}
	}
	if failed == "" {
		t.Fatal("4000 inline writes on a full disk all succeeded")
	}
	t.Logf("the catalog's disk full: %s refused", failed)
	if r := do("HEAD", n.URL+failed, ""); r.status != 404 {
		t.Errorf("HEAD of the failed write: %d, want 404", r.status)
	}
	if r := do("GET", n.URL+"/.shoal/healthz", ""); r.status != 503 || !strings.Contains(r.body, "catalog disk") || !strings.Contains(r.body, "disk full") {
		t.Errorf("md healthz with the catalog's disk full: %s", r)
	}
	if m := do("GET", n.URL+"/.shoal/metrics", ""); !strings.Contains(m.body, "shoal_catalog_disk_full 1\n") {
		t.Errorf("metrics:\n%s", grepLines(m.body, "shoal_catalog_"))
	}

	os.Remove(filler)
	waitFor(t, 10*time.Second, "a write after the filler went", func() bool {
		return putBody(n.URL+failed, []byte("back"), false).status == 201
	})
	waitFor(t, 5*time.Second, "healthz ok again", func() bool {
		return do("GET", n.URL+"/.shoal/healthz", "").status == 200
	})
	if g := do("GET", n.URL+failed, ""); g.status != 200 || g.body != "back" {
		t.Errorf("GET after recovery: %s", g)
	}
}

func grepLines(s, prefix string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
