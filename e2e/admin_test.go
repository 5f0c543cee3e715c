package e2e

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"shoal/internal/testsvc"
)

// TestFsck: `shoal admin fsck` exits 0 on a clean system, 1 once an
// object file is deleted behind the catalog's back (naming it as missing),
// and 2 when it cannot run.
func TestFsck(t *testing.T) {
	curl := need(t, "curl")
	// Objects are files here (no packs): the test loses one by removing it.
	n := startShoal(t, "", "SHOAL_MD_DATA_MODE=redirect", "SHOAL_DISK_PACK_MAX=0")
	dir := t.TempDir()
	admin := func(args ...string) (string, int) {
		return run(t, dir, nil, shoalBin, append([]string{"admin", "--md", n.URL, "--secret-file", filepath.Join(n.Data, "secret")}, args...)...)
	}

	for _, name := range []string{"one.bin", "two.bin"} {
		src, _ := randomFile(t, dir, name, 64<<10) // above md.inline_max: stored on the data server
		if out, code := run(t, dir, nil, curl, "-sS", "-L", "--fail-with-body", "-T", src, n.URL+"/"+name); code != 0 {
			t.Fatalf("curl -L -T %s: exit %d: %s", name, code, out)
		}
	}
	out, code := admin("fsck")
	if code != 0 {
		t.Fatalf("fsck on a clean system: exit %d, want 0:\n%s", code, out)
	}

	objects := objectFiles(t, filepath.Join(n.Data, "disk"))
	if len(objects) != 2 {
		t.Fatalf("found %d object files under %s/disk, want 2: %q", len(objects), n.Data, objects)
	}
	if err := os.Remove(objects[0]); err != nil {
		t.Fatal(err)
	}
	out, code = admin("fsck")
	if code != 1 {
		t.Errorf("fsck after deleting an object: exit %d, want 1:\n%s", code, out)
	}
	if id := filepath.Base(objects[0]); !strings.Contains(out, "MISSING") || !strings.Contains(out, id) {
		t.Errorf("fsck does not report object %s missing:\n%s", id, out)
	}

	out, code = run(t, dir, nil, shoalBin, "admin", "--md", n.URL, "--secret-file", writeSecret(t, "k0 0123456789abcdef0123456789abcdef"), "fsck")
	if code != 2 {
		t.Errorf("fsck with the wrong secret: exit %d, want 2:\n%s", code, out)
	}
	out, code = admin("servers")
	if code != 0 || !strings.Contains(out, n.DiskURL) {
		t.Errorf("admin servers: exit %d, want 0 and a line with %s:\n%s", code, n.DiskURL, out)
	}
}

// objectFiles lists the object files under a data directory (objects/…).
func objectFiles(t *testing.T, dataDir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(filepath.Join(dataDir, "objects"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func writeSecret(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(p, []byte(content+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPopulate: `shoal admin populate` bulk-loads the catalog `shoal all`
// then serves: the files answer HEAD and GET with their size and bytes.
func TestPopulate(t *testing.T) {
	curl := need(t, "curl")
	data := t.TempDir()
	dir := t.TempDir()
	out, code := run(t, dir, nil, shoalBin, "admin", "populate", "--catalog", "sqlite:"+filepath.Join(data, "catalog.db"),
		"--prefix", "/pop", "--files", "1000", "--dirs", "7", "--size", "100")
	if code != 0 {
		t.Fatalf("populate: exit %d: %s", code, out)
	}
	out, code = run(t, dir, nil, shoalBin, "admin", "populate", "--catalog", "sqlite:"+filepath.Join(data, "catalog.db"),
		"--prefix", "/pop", "--files", "10", "--dirs", "7")
	if code == 0 {
		t.Errorf("populate over existing files succeeded: %s", out)
	}
	n := startShoal(t, data)
	// File 999 is in directory 999 mod 7 = 5.
	out, code = run(t, dir, nil, curl, "-sS", "-I", "--fail-with-body", n.URL+"/pop/d0005/f0000999")
	if code != 0 || !strings.Contains(strings.ToLower(out), "content-length: 100") {
		t.Errorf("HEAD of a populated file: exit %d:\n%s", code, out)
	}
	got := filepath.Join(dir, "got")
	if out, code := run(t, dir, nil, curl, "-sS", "-L", "--fail-with-body", "-o", got, n.URL+"/pop/d0005/f0000999"); code != 0 {
		t.Fatalf("GET of a populated file: exit %d: %s", code, out)
	}
	checkFile(t, got, make([]byte, 100))
	if out, code := run(t, dir, nil, curl, "-sS", "-o", "/dev/null", "-w", "%{http_code}", "-I", n.URL+"/pop/d0005/f0000998"); out != "404" {
		t.Errorf("HEAD of a file populate did not make (998 is in d0004): exit %d, status %q, want 404", code, out)
	}
}

// TestPopulateForgetsMemcached: md replicas sharing memcached that had
// cached a path as missing find it at once after `shoal admin populate
// --memcached` wrote it; without --memcached they keep the 404 (until
// cache.negative_ttl, a minute here).
func TestPopulateForgetsMemcached(t *testing.T) {
	maria := testsvc.StartMariaDB(t)
	mc := testsvc.StartMemcached(t)
	secret := writeSecret(t, "k1 0123456789abcdef0123456789abcdef\n")
	md := startMD(t, maria.DSN, mc.Addr, secret, []string{"SHOAL_CACHE_NEGATIVE_TTL=1m"})
	status := func(path string) int { return do("HEAD", md.URL+path, "").status }
	populate := func(prefix string, extra ...string) {
		t.Helper()
		args := append([]string{"admin", "populate", "--catalog", maria.DSN, "--prefix", prefix, "--files", "3", "--dirs", "2"}, extra...)
		if out, code := run(t, t.TempDir(), nil, shoalBin, args...); code != 0 {
			t.Fatalf("populate %s: exit %d: %s", prefix, code, out)
		}
	}
	for _, prefix := range []string{"/a", "/b"} {
		for _, p := range []string{prefix, prefix + "/d0001", prefix + "/d0001/f0000001"} {
			if got := status(p); got != 404 {
				t.Fatalf("HEAD %s before populate = %d, want 404", p, got)
			}
		}
	}
	populate("/a")
	if got := status("/a/d0001/f0000001"); got != 404 {
		t.Errorf("HEAD after populate without --memcached = %d, want the cached 404 (is the answer cached at all?)", got)
	}
	populate("/b", "--memcached", mc.Addr)
	for _, p := range []string{"/b", "/b/d0001", "/b/d0001/f0000001", "/b/d0000/f0000002"} {
		if got := status(p); got != 200 {
			t.Errorf("HEAD %s after populate --memcached = %d, want 200", p, got)
		}
	}
}

// TestAdminJobExitCodes: every admin job command exits 2 when it could
// not run — a secret md refuses, a drain of a server md does not know
// (its job fails) — and 0 when it ran and all is well; exit 1 (the job
// ran and data is not right) is TestFsck's and
// TestAdminOperationsShowProgress's.
func TestAdminJobExitCodes(t *testing.T) {
	n := startShoal(t, "")
	wrong := writeSecret(t, "k0 0123456789abcdef0123456789abcdef")
	for _, job := range [][]string{{"fsck"}, {"repair"}, {"scrub", "--rate", "0"}, {"drain", "nosuch"}, {"job", "follow", "1"}} {
		out, code := run(t, "", nil, shoalBin, append([]string{"admin", "--md", n.URL, "--secret-file", wrong}, job...)...)
		if code != 2 {
			t.Errorf("%s with the wrong secret: exit %d, want 2:\n%s", job[0], code, out)
		}
	}
	admin := func(args ...string) (string, int) {
		return run(t, "", nil, shoalBin, append([]string{"admin", "--md", n.URL, "--secret-file", filepath.Join(n.Data, "secret")}, args...)...)
	}
	if out, code := admin("drain", "nosuch"); code != 2 || !strings.Contains(out, "nosuch") {
		t.Errorf("drain of an unknown server: exit %d, want 2 naming it:\n%s", code, out)
	}
	if out, code := admin("drain"); code != 2 {
		t.Errorf("drain without a server: exit %d, want 2:\n%s", code, out)
	}
	if out, code := admin("repair"); code != 0 {
		t.Errorf("repair of a clean system: exit %d, want 0:\n%s", code, out)
	}
}
