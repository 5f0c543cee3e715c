package remote_test

import (
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
