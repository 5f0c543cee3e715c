package diskserver

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"shoal"
	"shoal/storetest"
)

// cleanStopped is a store's packs after a clean stop: published a0–a2,
// staged 5e, 7e removed; it returns their bytes.
func cleanStopped(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	s := newPackStore(t, dir)
	data := map[string][]byte{}
	for i, id := range []string{"a0", "a1", "a2", "5e", "7e"} {
		data[id] = storetest.Data(uint64(i), 5000+i*7000)
		stage(t, s, id, data[id])
	}
	publish(t, s, "a0", "a1", "a2", "7e")
	if err := s.Remove(context.Background(), "7e"); err != nil {
		t.Fatal(err)
	}
	if err := s.FlushStaged(); err != nil {
		t.Fatal(err)
	}
	return data
}

// wantCleanStopped checks what cleanStopped left, as s opened it.
func wantCleanStopped(t *testing.T, s *Store, data map[string][]byte) {
	t.Helper()
	for _, id := range []string{"a0", "a1", "a2"} {
		wantContent(t, s, id, data[id])
	}
	if ids, err := s.Staged(context.Background()); err != nil || len(ids) != 1 || ids[0] != "5e" {
		t.Errorf("staged: %v (%v), want [5e]", ids, err)
	}
	if _, err := s.Open(context.Background(), "7e"); !shoal.IsKind(err, shoal.KindNotFound) {
		t.Errorf("the removed object opens: %v", err)
	}
}

// TestPackIndexAtCleanStop: after a clean stop the next start reads the
// index, scans no pack, finds the same objects, and removes the index
// before it changes anything: a crash of that run is followed by a scan.
func TestPackIndexAtCleanStop(t *testing.T) {
	dir := t.TempDir()
	data := cleanStopped(t, dir)
	s := newPackStore(t, dir)
	if n := s.disks[0].packs.scanned; n != 0 {
		t.Errorf("%d packs scanned after a clean stop, want 0 (the index)", n)
	}
	wantCleanStopped(t, s, data)
	if _, err := os.Stat(filepath.Join(dir, packsDir, indexName)); !os.IsNotExist(err) {
		t.Fatalf("the index outlives the start that read it: %v", err)
	}
	data["9e"] = []byte("after the index")
	stage(t, s, "9e", data["9e"])
	publish(t, s, "9e", "5e")
	// A crash: no FlushStaged.
	s2 := newPackStore(t, dir)
	if s2.disks[0].packs.scanned == 0 {
		t.Error("no pack scanned after a crash")
	}
	for _, id := range []string{"a0", "a1", "a2", "5e", "9e"} {
		wantContent(t, s2, id, data[id])
	}
}

// TestPackIndexNotTrusted: an index that is damaged, or that does not
// match a pack as it is now, or that follows an unsettled crash, is not
// used: the packs are scanned, and the objects are the same.
func TestPackIndexNotTrusted(t *testing.T) {
	index := func(dir string) string { return filepath.Join(dir, packsDir, indexName) }
	for name, spoil := range map[string]func(t *testing.T, dir string){
		"damaged": func(t *testing.T, dir string) {
			b, err := os.ReadFile(index(dir))
			if err != nil {
				t.Fatal(err)
			}
			b[len(b)/2] ^= 1
			if err := os.WriteFile(index(dir), b, 0o600); err != nil {
				t.Fatal(err)
			}
		},
		"pack grew": func(t *testing.T, dir string) {
			f, err := os.OpenFile(filepath.Join(dir, packsDir, "0000000000000000"), os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.Write(make([]byte, 2*packAlign)); err != nil {
				t.Fatal(err)
			}
		},
		"unsettled": func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, packsDir, unsettledName), []byte("1\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			data := cleanStopped(t, dir)
			spoil(t, dir)
			s := newPackStore(t, dir)
			if s.disks[0].packs.scanned == 0 {
				t.Error("the index was used")
			}
			wantCleanStopped(t, s, data)
		})
	}
}

func TestPackIndexRoundTrip(t *testing.T) {
	x := packIndex{packs: []indexedPack{{seq: 3, size: 64 << 10, nonce: [nonceSize]byte{1, 2}}},
		records: []indexedRecord{{pack: 0, id: "abcd", off: packAlign, size: 100, mtimeNs: 42, state: recPublished}}}
	y, ok := parsePackIndex(encodePackIndex(x))
	if !ok || len(y.packs) != 1 || y.packs[0] != x.packs[0] || len(y.records) != 1 || y.records[0] != x.records[0] {
		t.Fatalf("round trip: %+v %v", y, ok)
	}
	b := encodePackIndex(x)
	for i := range len(b) {
		if _, ok := parsePackIndex(b[:i]); ok {
			t.Fatalf("a prefix of %d bytes parses", i)
		}
	}
}

// FuzzParsePackIndex: the index is read back from the disk; the parser
// accepts only what encodes back to the same bytes.
func FuzzParsePackIndex(f *testing.F) {
	f.Add(encodePackIndex(packIndex{}))
	f.Add(encodePackIndex(packIndex{packs: []indexedPack{{seq: 1, size: 1 << 20}},
		records: []indexedRecord{{id: "00ff", off: packAlign, size: 10, state: recStaged}, {id: "ab", off: 2 * packAlign, state: recPublished}}}))
	f.Add([]byte(indexMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		x, ok := parsePackIndex(b)
		if !ok {
			return
		}
		if !bytes.Equal(encodePackIndex(x), b) {
			t.Fatal("an accepted index does not encode back to itself")
		}
	})
}
