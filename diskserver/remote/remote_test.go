package remote_test

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

// TestRemoteConformance runs the BlobStore suite through the HTTP client
// against a real diskserver on loopback.
func TestRemoteConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) shoal.BlobStore {
		keys := sign.Random()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv, err := diskserver.New(diskserver.Options{Dirs: []string{t.TempDir()}, Keys: keys, ReserveBytes: -1})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- srv.Serve(ln) }()
		t.Cleanup(func() {
			srv.Close()
			<-done
		})
		return remote.New("http://"+ln.Addr().String(), keys)
	})
}

// TestCreateExistingLargeBody: the server refuses a duplicate before
// reading the body; the client must still see KindExist, not a broken pipe.
func TestCreateExistingLargeBody(t *testing.T) {
	keys := sign.Random()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := diskserver.New(diskserver.Options{Dirs: []string{t.TempDir()}, Keys: keys, ReserveBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	c := remote.New("http://"+ln.Addr().String(), keys)
	data := storetest.Data(1, 32<<20)
	if _, _, err := c.Create(t.Context(), "b16", bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		_, _, err := c.Create(t.Context(), "b16", bytes.NewReader(data))
		if !shoal.IsKind(err, shoal.KindExist) {
			t.Errorf("second Create of a 32 MiB object: %v, want KindExist", err)
		}
	}
}
