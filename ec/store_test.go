package ec

import (
	"bytes"
	"context"
	"io"
	"testing"

	"shoal"
	"shoal/diskserver"
	"shoal/storetest"
)

// localShards returns n local diskserver stores, each in its own temp dir.
func localShards(t testing.TB, n int) ([]shoal.BlobStore, []string) {
	t.Helper()
	shards := make([]shoal.BlobStore, n)
	dirs := make([]string, n)
	for i := range n {
		dirs[i] = t.TempDir()
		st, err := diskserver.NewStore([]string{dirs[i]}, 0)
		if err != nil {
			t.Fatal(err)
		}
		shards[i] = st
	}
	return shards, dirs
}

func newLocal(t testing.TB, k, m, stripe int) *Store {
	t.Helper()
	shards, _ := localShards(t, k+m)
	s, err := New(Options{K: k, M: m, StripeSize: stripe, Shards: shards})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformanceLocal(t *testing.T) {
	for _, c := range []struct{ k, m, stripe int }{{4, 2, 0}, {2, 1, 4096}, {3, 2, 1000}} {
		t.Run(shoal.Layout{Kind: shoal.LayoutEC, K: c.k, M: c.m}.String(), func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) shoal.BlobStore { return newLocal(t, c.k, c.m, c.stripe) })
		})
	}
}

// TestConformanceRemote: ec.Store over HTTP clients of real diskservers.
func TestConformanceRemote(t *testing.T) {
	storetest.Run(t, func(t *testing.T) shoal.BlobStore {
		c := startCluster(t, 3)
		s, err := New(Options{K: 2, M: 1, StripeSize: 8192, Shards: c.Remotes()})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// sizes are the file sizes every layout test writes, for a given stripe.
func sizes(stripe int) []int {
	return []int{0, 1, stripe - 1, stripe, stripe + 1, 5*stripe + 777}
}

func readAll(t testing.TB, s shoal.BlobStore, id string) ([]byte, error) {
	t.Helper()
	obj, err := s.Open(context.Background(), id)
	if err != nil {
		return nil, err
	}
	defer obj.Close()
	b := make([]byte, obj.Size())
	// Odd-sized reads cross stripe boundaries in every way.
	var off int64
	for off < obj.Size() {
		n, err := obj.ReadAt(b[off:min(off+99_991, obj.Size())], off)
		off += int64(n)
		if err != nil && err != io.EOF {
			return nil, err
		}
	}
	return b, nil
}

func TestRoundTripSizes(t *testing.T) {
	const stripe = 64 << 10
	s := newLocal(t, 4, 2, stripe)
	ctx := context.Background()
	for i, n := range sizes(stripe) {
		data := storetest.Data(uint64(i), n)
		id := idFor(i)
		info, sums, err := s.Create(ctx, id, bytes.NewReader(data))
		if err != nil {
			t.Fatalf("Create %d bytes: %v", n, err)
		}
		if info.Size != int64(n) {
			t.Errorf("size %d, want %d", info.Size, n)
		}
		want, _, _ := (&plain{}).sums(data)
		if sums.Adler32 != want {
			t.Errorf("%d bytes: adler32 %08x, want %08x", n, sums.Adler32, want)
		}
		got, err := readAll(t, s, id)
		if err != nil {
			t.Fatalf("read %d bytes: %v", n, err)
		}
		if !bytes.Equal(got, data) {
			t.Errorf("%d bytes: content differs", n)
		}
	}
}
