package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"shoal"
)

// TestAdminOperationsShowProgress: `shoal admin scrub|repair|fsck|drain`
// stream md's progress to stderr (one line per phase when stderr is not a
// terminal, and where the operation stopped), then print the summary and
// exit by what they found.
func TestAdminOperationsShowProgress(t *testing.T) {
	curl := need(t, "curl")
	// Objects are files here (no packs): the test loses one by removing it.
	n := startShoal(t, "", "SHOAL_MD_DATA_MODE=redirect", "SHOAL_DISK_PACK_MAX=0")
	dir := t.TempDir()
	admin := func(args ...string) (string, int) {
		return run(t, dir, nil, shoalBin, append([]string{"admin", "--md", n.URL, "--secret-file", filepath.Join(n.Data, "secret")}, args...)...)
	}
	for i := range 3 {
		src, _ := randomFile(t, dir, fmt.Sprintf("f%d", i), 64<<10)
		if out, code := run(t, dir, nil, curl, "-sS", "-L", "--fail-with-body", "-T", src, fmt.Sprintf("%s/f%d", n.URL, i)); code != 0 {
			t.Fatalf("curl -T: exit %d: %s", code, out)
		}
	}
	expect := func(what string, out string, code, wantCode int, wants ...string) {
		t.Helper()
		if code != wantCode {
			t.Errorf("%s: exit %d, want %d:\n%s", what, code, wantCode, out)
		}
		for _, w := range wants {
			if !strings.Contains(out, w) {
				t.Errorf("%s: output lacks %q:\n%s", what, w, out)
			}
		}
	}
	out, code := admin("scrub", "--rate", "0")
	expect("scrub", out, code, 0, "scrub: listing files", "scrub: reading and verifying 3/3 files (100%) · 0 problems · read 192.0 KiB", "files 3  replicas/shards 3")
	out, code = admin("repair")
	expect("repair", out, code, 0, "repair: checking and repairing 3/3 files (100%) · 0 problems", "files 3  healthy 3")
	out, code = admin("fsck")
	expect("fsck", out, code, 0, "fsck: server 1/1 ", "reading the catalog", "listing its disks 3/3 objects")
	out, code = admin("--quiet", "fsck")
	if code != 0 || strings.Contains(out, "fsck: server") {
		t.Errorf("fsck --quiet: exit %d, progress shown:\n%s", code, out)
	}

	objects := objectFiles(t, filepath.Join(n.Data, "disk"))
	if err := os.Remove(objects[0]); err != nil {
		t.Fatal(err)
	}
	out, code = admin("scrub", "--rate", "0")
	expect("scrub after losing an object", out, code, 1, "3/3 files (100%) · 1 problems", "bad files 1")

	// The only data server cannot be drained: nowhere to move to. Drain
	// says so pass by pass, then gives up.
	out, code = admin("--json", "servers")
	var servers []shoal.Server
	if err := json.Unmarshal([]byte(out), &servers); code != 0 || err != nil || len(servers) != 1 {
		t.Fatalf("admin --json servers: exit %d, %v:\n%s", code, err, out)
	}
	id := servers[0].ID
	out, code = admin("drain", id)
	expect("drain of the only server", out, code, 1, "drain: pass 1: listing what "+id+" holds", "drain: pass 1: moving files off "+id, "still holds")
}
