package diskserver_test

import (
	"bytes"
	"net"
	"testing"

	"shoal"
	"shoal/diskserver"
	"shoal/diskserver/remote"
	"shoal/sign"
	"shoal/storetest"
)

// TestRemoteUpload: md's proxy-mode upload through the remote client, with
// a real diskserver committing to a real md peer on loopback.
func TestRemoteUpload(t *testing.T) {
	keys := sign.Random()
	md := diskserver.StartMD(t, keys)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := diskserver.New(diskserver.Options{Dirs: []string{t.TempDir()}, Keys: keys, MDURL: md.URL, ID: "d1", ReserveBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	c := remote.New("http://"+ln.Addr().String(), keys)
	data := storetest.Data(3, 123_456)

	for _, size := range []int64{int64(len(data)), -1} {
		id := "a1"
		if size < 0 {
			id = "a2"
		}
		res, err := c.Upload(t.Context(), id, "up-"+id, bytes.NewReader(data), size)
		if err != nil {
			t.Fatalf("Upload (size %d): %v", size, err)
		}
		if res.Status != 201 || res.ETag != `"1-1"` || res.Size != int64(len(data)) {
			t.Errorf("Upload (size %d) = %+v", size, res)
		}
	}
	if got := md.Commits(); len(got) != 2 || got[0].Upload != "up-a1" || got[1].Upload != "up-a2" {
		t.Errorf("md commits = %+v", got)
	}
	md.SetCommit(409, "parent gone")
	_, err = c.Upload(t.Context(), "a3", "up-a3", bytes.NewReader(data), int64(len(data)))
	if !shoal.IsKind(err, shoal.KindConflict) || shoal.Reason(err) != "conflict: parent gone" {
		t.Errorf("Upload refused by md: %v (reason %q), want KindConflict with md's reason", err, shoal.Reason(err))
	}
	if _, err := c.Open(t.Context(), "a3"); !shoal.IsKind(err, shoal.KindNotFound) {
		t.Errorf("object of a refused upload: %v, want KindNotFound", err)
	}
}
