package jobs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"shoal/diskserver"
	"shoal/internal/testsystem"
	"shoal/jobs"
	"shoal/md"
	"shoal/wire"
)

// TestFsckQueuedGarbage: the old object of an overwritten file and the
// object of a deleted one stay on disk until their garbage grace is over
// (md.url_ttl, a minute here) and the data server's garbage loop removes
// them. fsck counts them as queued garbage, not as orphans, and reports
// OK; an object nobody queued is still an orphan. Before, fsck failed
// (exit 1) until the queue drained.
func TestFsckQueuedGarbage(t *testing.T) {
	c := testsystem.New(t, func(o *md.Options) { o.URLTTL = time.Minute })
	ids := c.AddDisks("default", 1)
	ctx := context.Background()
	for _, r := range []struct {
		method, path string
		body         []byte
		status       int
	}{
		{"PUT", "/a", bytes.Repeat([]byte("a"), 10000), 201},
		{"PUT", "/a", bytes.Repeat([]byte("A"), 10000), 204},
		{"PUT", "/b", bytes.Repeat([]byte("b"), 10000), 201},
		{"DELETE", "/b", nil, 204},
	} {
		if st, body := c.Do(r.method, c.PURL, r.path, nil, r.body); st != r.status {
			t.Fatalf("%s %s: %d %s", r.method, r.path, st, body)
		}
	}
	var rep wire.FsckReport
	c.Admin(wire.PathAdminFsck, struct{}{}, &rep)
	if j, _ := json.Marshal(rep); !rep.OK || rep.Garbage != 2 || len(rep.Orphans) != 0 || rep.Objects != 3 {
		t.Errorf("with two objects queued as garbage: %s, want OK, garbage 2, no orphans, 3 objects", j)
	}

	disk, err := diskserver.NewStore([]string{c.Disks[ids[0]].Dir}, -1)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := disk.Create(ctx, "0123abcd", strings.NewReader("orphan")); err != nil {
		t.Fatal(err)
	}
	rep, err = jobs.Fsck(ctx, c.Env(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if j, _ := json.Marshal(rep); rep.OK || rep.Garbage != 2 || len(rep.Orphans) != 1 || rep.Orphans[0].Object != "0123abcd" {
		t.Errorf("with a real orphan too: %s, want not OK, garbage 2, the orphan named", j)
	}
}
