package md

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"

	"shoal"
	"shoal/diskserver/remote"
	"shoal/wire"
)

func TestFsck(t *testing.T) {
	e := newEnv(t, DataProxy)
	ctx := context.Background()
	e.put("/a", bytes.Repeat([]byte("a"), 10000)).want(t, "PUT", 201, "")
	e.put("/b", bytes.Repeat([]byte("b"), 10000)).want(t, "PUT", 201, "")
	e.put("/inline", []byte("i")).want(t, "PUT", 201, "")

	admin := func() wire.FsckReport {
		var rep wire.FsckReport
		if _, err := wire.NewClient(e.url, e.keys).Call(wire.PathAdminFsck, struct{}{}, &rep); err != nil {
			t.Fatal(err)
		}
		return rep
	}
	if rep := admin(); !rep.OK || rep.Replicas != 2 || rep.Objects != 2 || rep.Servers != 1 {
		t.Fatalf("clean system: %+v", rep)
	}

	// An orphan (an object no entry names) and a missing replica.
	if _, _, err := e.ds.Store().Create(ctx, "0123abcd", strings.NewReader("orphan")); err != nil {
		t.Fatal(err)
	}
	b, err := e.db.Stat(ctx, "/b")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.ds.Store().Remove(ctx, b.Replicas[0].Object); err != nil {
		t.Fatal(err)
	}
	rep, err := Fsck(ctx, e.db, e.md.opts.Store, nil)
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
	rep, err = Fsck(ctx, e.db, func(shoal.Server) shoal.BlobStore { return remote.New(dead, e.keys) }, nil)
	if err != nil || rep.OK || len(rep.Unreachable) != 1 {
		t.Errorf("unreachable: %+v %v", rep, err)
	}

	// Unsigned admin calls are refused.
	e.do("POST", wire.PathAdminFsck, nil, []byte("{}")).want(t, "unsigned fsck", 403, "")
	var servers []shoal.Server
	if _, err := wire.NewClient(e.url, e.keys).Call(wire.PathAdminServers, struct{}{}, &servers); err != nil || len(servers) != 1 || servers[0].ID != "ds1" {
		t.Errorf("admin servers: %+v %v", servers, err)
	}
}
