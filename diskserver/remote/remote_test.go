package remote_test

import (
	"bytes"
	"testing"

	"shoal"
	"shoal/diskserver"
	"shoal/diskserver/remote"
	"shoal/internal/testhttp"
	"shoal/sign"
	"shoal/storetest"
)

// TestRemoteConformance runs the BlobStore suite through the HTTP client
// against a real diskserver on loopback.
func TestRemoteConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) shoal.BlobStore {
		keys := sign.Random()
		ln, url := testhttp.Listen(t)
		srv, err := diskserver.New(diskserver.Options{Dirs: []string{t.TempDir()}, Keys: keys, ReserveBytes: -1})
		if err != nil {
			t.Fatal(err)
		}
		testhttp.Serve(t, srv, ln)
		return remote.New(url, keys)
	})
}

// TestCreateExistingLargeBody: the server refuses a duplicate before
// reading the body; the client must still see KindExist, not a broken pipe.
func TestCreateExistingLargeBody(t *testing.T) {
	keys := sign.Random()
	ln, url := testhttp.Listen(t)
	srv, err := diskserver.New(diskserver.Options{Dirs: []string{t.TempDir()}, Keys: keys, ReserveBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	testhttp.Serve(t, srv, ln)
	c := remote.New(url, keys)
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
