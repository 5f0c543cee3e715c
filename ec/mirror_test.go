package ec

import (
	"bytes"
	"io"
	"testing"

	"shoal"
	"shoal/storetest"
)

func TestMirrorConformance(t *testing.T) {
	for _, n := range []int{1, 2, 3} {
		t.Run(shoal.Layout{Kind: shoal.LayoutReplica, N: n}.String(), func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) shoal.BlobStore {
				stores, _ := localShards(t, n)
				m, err := NewMirror(stores)
				if err != nil {
					t.Fatal(err)
				}
				return m
			})
		})
	}
}

// Every copy is byte-exact; stores down make Create fail with
// KindUnavailable (retry, not "no space") and leave no copy on the others;
// reads survive N-1 copies gone.
func TestMirrorCopiesAndFailure(t *testing.T) {
	c := startCluster(t, 3)
	m, err := NewMirror(c.Remotes())
	if err != nil {
		t.Fatal(err)
	}
	data := storetest.Data(7, 3<<20+5)
	w, err := m.CreateShards(t.Context(), "ab01", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Shards) != 3 || w.Info.Size != int64(len(data)) {
		t.Fatalf("written %+v", w)
	}
	for i, st := range c.Remotes() {
		obj, err := st.Open(t.Context(), "ab01")
		if err != nil {
			t.Fatalf("copy %d: %v", i, err)
		}
		got, _ := io.ReadAll(io.NewSectionReader(obj, 0, obj.Size()))
		obj.Close()
		if !bytes.Equal(got, data) {
			t.Errorf("copy %d differs", i)
		}
	}
	c.Disks[0].Stop()
	c.Disks[1].Stop()
	obj, err := m.Open(t.Context(), "ab01")
	if err != nil {
		t.Fatalf("Open with 2 of 3 down: %v", err)
	}
	obj.Close()
	_, err = m.CreateShards(t.Context(), "ab02", bytes.NewReader(data))
	if !shoal.IsKind(err, shoal.KindUnavailable) {
		t.Fatalf("Create with stores down: %v, want KindUnavailable", err)
	}
	if _, err := c.Remotes()[2].Open(t.Context(), "ab02"); !shoal.IsKind(err, shoal.KindNotFound) {
		t.Errorf("a copy stayed after the failed Create: %v", err)
	}
}
