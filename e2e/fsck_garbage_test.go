package e2e

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestFsckQueuedGarbage: right after an overwrite and a delete, the old
// objects are still on disk, queued as garbage for md.url_ttl: `shoal
// admin fsck` reports them on its "queued garbage" line, not as orphans,
// and exits 0. (It exited 1 until the queue drained.)
func TestFsckQueuedGarbage(t *testing.T) {
	n := startShoal(t, "")
	big := strings.Repeat("x", 64<<10) // above md.inline_max: stored on the data server
	mustDo(t, 201, "PUT", n.URL+"/a", big)
	mustDo(t, 204, "PUT", n.URL+"/a", big+"y")
	mustDo(t, 201, "PUT", n.URL+"/b", big)
	mustDo(t, 204, "DELETE", n.URL+"/b", "")
	out, code := run(t, t.TempDir(), nil, shoalBin, "admin", "--md", n.URL, "--secret-file", filepath.Join(n.Data, "secret"), "fsck")
	if code != 0 || !regexp.MustCompile(`(?m)^queued garbage +2$`).MatchString(out) || !regexp.MustCompile(`(?m)^orphans +0$`).MatchString(out) {
		t.Errorf("fsck with two objects queued as garbage: exit %d, want 0 with \"queued garbage 2\" and no orphans:\n%s", code, out)
	}
}
