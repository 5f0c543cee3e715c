package jobs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"

	"shoal"
	"shoal/diskserver"
	"shoal/diskserver/remote"
	"shoal/internal/testsystem"
	"shoal/jobs"
	"shoal/wire"
)

// TestFsck: fsck through md (a job) and called directly finds an orphan
// (an object no entry names) and a missing replica, skips the gw, and
// reports a server it cannot list as unreachable.
func TestFsck(t *testing.T) {
	c := testsystem.New(t)
	ids := c.AddDisks("default", 1)
	ctx := context.Background()
	for path, data := range map[string][]byte{"/a": bytes.Repeat([]byte("a"), 10000), "/b": bytes.Repeat([]byte("b"), 10000), "/inline": []byte("i")} {
		if st, body := c.Do("PUT", c.PURL, path, nil, data); st != 201 {
			t.Fatalf("PUT %s: %d %s", path, st, body)
		}
	}
	admin := func() wire.FsckReport {
		var rep wire.FsckReport
		c.Admin(wire.PathAdminFsck, struct{}{}, &rep)
		return rep
	}
	if rep := admin(); !rep.OK || rep.Replicas != 2 || rep.Objects != 2 || rep.Servers != 1 {
		t.Fatalf("clean system: %+v", rep)
	}

	disk, err := diskserver.NewStore([]string{c.Disks[ids[0]].Dir}, -1)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := disk.Create(ctx, "0123abcd", strings.NewReader("orphan")); err != nil {
		t.Fatal(err)
	}
	if err := disk.Remove(ctx, c.Entry("/b").Replicas[0].Object); err != nil {
		t.Fatal(err)
	}
	rep, err := jobs.Fsck(ctx, c.Env(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK || len(rep.Orphans) != 1 || rep.Orphans[0].Object != "0123abcd" ||
		len(rep.Missing) != 1 || rep.Missing[0].Path != "/b" || rep.Missing[0].Reason != "not on disk" {
		j, _ := json.MarshalIndent(rep, "", " ")
		t.Errorf("report:\n%s", j)
	}
	if got := admin(); got.OK || len(got.Orphans) != 1 || len(got.Missing) != 1 {
		t.Errorf("admin fsck: %+v", got)
	}

	// A server that cannot be listed is reported unreachable: a real
	// client aimed at a port nothing listens on.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := "http://" + ln.Addr().String()
	ln.Close()
	env := c.Env()
	env.Store = func(shoal.Server) shoal.BlobStore { return remote.New(dead, c.Keys) }
	rep, err = jobs.Fsck(ctx, env, nil)
	if err != nil || rep.OK || len(rep.Unreachable) != 1 {
		t.Errorf("unreachable: %+v %v", rep, err)
	}
}
