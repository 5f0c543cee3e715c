package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"shoal"
)

// TestECOnOneBox: `shoal all --data DIR1,DIR2,DIR3 --layout ec:2+1` runs a
// data server per directory and an in-process gw; files written to it
// survive losing one directory (its disk removed), read byte-exact, and
// `shoal admin repair` says why it cannot rebuild onto two servers.
func TestECOnOneBox(t *testing.T) {
	root := t.TempDir()
	dirs := []string{filepath.Join(root, "usb1"), filepath.Join(root, "usb2"), filepath.Join(root, "usb3")}
	cmd := exec.Command(shoalBin, "all", "--data", strings.Join(dirs, ","), "--layout", "ec:2+1",
		"--listen", "127.0.0.1:0", "--disk-listen", "127.0.0.1:0", "--log-level", "debug")
	cmd.Env = append(os.Environ(), "SHOAL_MD_DATA_MODE=proxy")
	n := runNode(t, cmd, dirs[0], "shoal all (3 disks)", 60*time.Second)

	files := map[string][]byte{}
	for i, size := range []int{0, 100, 10_000, 300_000, 3<<20 + 17} {
		b := make([]byte, size)
		rand.Read(b)
		path := fmt.Sprintf("/f%d", i)
		if r := do("PUT", n.URL+path, string(b)); r.status != 201 {
			t.Fatalf("PUT %s (%d bytes): %v", path, size, r)
		}
		files[path] = b
	}
	// Every data file is spread over the three disks: each holds objects.
	for _, d := range dirs {
		if objs := countFiles(t, filepath.Join(d, "disk", "objects")); objs < 3 {
			t.Fatalf("%s holds %d objects, want a shard of each of the 3 data files", d, objs)
		}
	}

	// Lose a disk: its data server finds nothing any more.
	if err := os.RemoveAll(filepath.Join(dirs[2], "disk")); err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		for path, want := range files {
			r := do("GET", n.URL+path, "")
			if r.status != 200 || !bytes.Equal([]byte(r.body), want) {
				t.Fatalf("round %d, GET %s with a disk lost: %d, %d bytes (want %d)", round, path, r.status, len(r.body), len(want))
			}
		}
		time.Sleep(500 * time.Millisecond)
	}

	out, code := run(t, root, nil, shoalBin, "admin", "--md", n.URL, "--secret-file", filepath.Join(dirs[0], "secret"), "repair")
	if code == 0 || !strings.Contains(out, "ec:2+1 needs 3 distinct servers") {
		t.Errorf("repair onto two servers of an ec:2+1 pool: exit %d\n%s", code, out)
	}
	t.Logf("repair with a disk lost:\n%s", out)

	// Replace the disk: an empty directory at the lost path, a restart
	// (new ports). It comes back as the same data server, and the gw as
	// the same gw: no ghost beside them holds the catalog's rows or fails
	// status. Repair then rebuilds the lost shards in place.
	n.stop(t) // exit 1: the lost disk's pack index could not be saved
	cmd = exec.Command(shoalBin, "all", "--data", strings.Join(dirs, ","), "--layout", "ec:2+1",
		"--listen", "127.0.0.1:0", "--disk-listen", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "SHOAL_MD_DATA_MODE=proxy")
	n = runNode(t, cmd, dirs[0], "shoal all (a disk replaced)", 60*time.Second)
	admin := func(args ...string) (string, int) {
		return run(t, root, nil, shoalBin, append([]string{"admin", "--md", n.URL, "--secret-file", filepath.Join(dirs[0], "secret")}, args...)...)
	}
	out, _ = admin("--json", "servers")
	var servers []shoal.Server
	if err := json.Unmarshal([]byte(out), &servers); err != nil {
		t.Fatalf("servers --json: %v\n%s", err, out)
	}
	if len(servers) != 4 {
		t.Errorf("after the disk's replacement md knows %d servers, want 3 data servers and the gw:\n%s", len(servers), out)
	}
	if out, code := admin("repair"); code != 0 || !strings.Contains(out, "rebuilt in place") {
		t.Errorf("repair after the disk's replacement: exit %d\n%s", code, out)
	}
	if out, code := admin("fsck"); code != 0 {
		t.Errorf("fsck after the repair: exit %d\n%s", code, out)
	}
	if out, code := admin("status"); code != 0 {
		t.Errorf("status after the repair: exit %d\n%s", code, out)
	}
	for path, want := range files {
		if r := do("GET", n.URL+path, ""); r.status != 200 || !bytes.Equal([]byte(r.body), want) {
			t.Errorf("GET %s after the repair: %d, %d bytes (want %d): %.300s", path, r.status, len(r.body), len(want), r.body)
		}
	}
}

func countFiles(t *testing.T, dir string) int {
	n := 0
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return nil
	})
	return n
}
