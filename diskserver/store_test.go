package diskserver

import (
	"bytes"
	"crypto/md5"
	"hash/adler32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"shoal"
	"shoal/storetest"
)

func TestStoreOneDisk(t *testing.T) {
	storetest.Run(t, func(t *testing.T) shoal.BlobStore {
		s, err := NewStore([]string{t.TempDir()}, 0)
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestStoreTwoDisks(t *testing.T) {
	storetest.Run(t, func(t *testing.T) shoal.BlobStore {
		s, err := NewStore([]string{t.TempDir(), t.TempDir()}, 0)
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// Every object a file of its own: the contract holds without packs.
func TestStoreNoPacks(t *testing.T) {
	storetest.Run(t, func(t *testing.T) shoal.BlobStore {
		s, err := NewStore([]string{t.TempDir()}, 0)
		if err != nil {
			t.Fatal(err)
		}
		s.SetPackMax(-1)
		return s
	})
}

// Without O_TMPFILE (other systems, some filesystems), temp files are
// named under tmp/: the same contract holds.
func TestStoreNamedTemps(t *testing.T) {
	storetest.Run(t, func(t *testing.T) shoal.BlobStore {
		s, err := NewStore([]string{t.TempDir()}, 0)
		if err != nil {
			t.Fatal(err)
		}
		s.disks[0].unnamed = false
		return s
	})
}

func TestStaleTempRemovedAtStart(t *testing.T) {
	dir := t.TempDir()
	if _, err := NewStore([]string{dir}, 0); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, tmpDir, "abcd.123")
	if err := os.WriteFile(stale, []byte("half an upload"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := NewStore([]string{dir}, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale temp file still there after restart (stat err %v)", err)
	}
}

func TestCreateRefusesWhenReserveExceedsFree(t *testing.T) {
	s, err := NewStore([]string{t.TempDir()}, 1<<62)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = s.Create(t.Context(), "abc", strings.NewReader("x"))
	if !shoal.IsKind(err, shoal.KindInsufficient) {
		t.Errorf("Create with a reserve larger than the disk: %v, want KindInsufficient", err)
	}
}

func TestCreateSizedRefusesWhatDoesNotFit(t *testing.T) {
	s, err := NewStore([]string{t.TempDir(), t.TempDir()}, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = s.CreateSized(t.Context(), "abc", strings.NewReader("x"), 1<<62)
	if !shoal.IsKind(err, shoal.KindInsufficient) {
		t.Errorf("CreateSized larger than any disk: %v, want KindInsufficient", err)
	}
	if _, _, err := s.CreateSized(t.Context(), "abc", strings.NewReader("x"), 1); err != nil {
		t.Errorf("CreateSized of 1 byte: %v", err)
	}
}

func TestObjectsStoredUnderIDs(t *testing.T) {
	dir := t.TempDir()
	s, err := NewStore([]string{dir}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Create(t.Context(), "abcdef01", strings.NewReader("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, objectsDir, "ab", "abcdef01")); err != nil {
		t.Errorf("object not at objects/ab/abcdef01: %v", err)
	}
	left, _ := os.ReadDir(filepath.Join(dir, tmpDir))
	if len(left) != 0 {
		t.Errorf("%d files left in tmp/ after a create", len(left))
	}
}

// With MD5 off (disk.md5: false), an object has its adler32 alone, packed
// or not (a record is checked with its CRC32C); with it on, every one has
// an MD5 too.
func TestStoreWithoutMD5(t *testing.T) {
	s := newPackStore(t, t.TempDir())
	big := bytes.Repeat([]byte("no md5 "), 20000)
	small := []byte("a small object, packed")
	for _, c := range []struct {
		id      string
		data    []byte
		staged  bool
		wantMD5 bool
	}{{"f1", big, false, false}, {"f2", big, true, false}, {"a1", small, true, false},
		{"f3", big, false, true}, {"f4", big, true, true}, {"a2", small, true, true}} {
		s.SetMD5(c.wantMD5)
		var sums shoal.Sums
		var err error
		if c.staged {
			_, sums, err = s.CreateStaged(t.Context(), c.id, bytes.NewReader(c.data), int64(len(c.data)))
		} else {
			_, sums, err = s.Create(t.Context(), c.id, bytes.NewReader(c.data))
		}
		if err != nil {
			t.Fatalf("%s: %v", c.id, err)
		}
		if packed := s.disks[0].packs.has(c.id); packed != (c.staged && len(c.data) == len(small)) {
			t.Fatalf("%s: in a pack: %v", c.id, packed)
		}
		if sums.Adler32 != adler32.Checksum(c.data) {
			t.Errorf("%s: adler32 %08x, want %08x", c.id, sums.Adler32, adler32.Checksum(c.data))
		}
		want := md5.Sum(c.data)
		if got := bytes.Equal(sums.MD5, want[:]); got != c.wantMD5 || (!c.wantMD5 && sums.MD5 != nil) {
			t.Errorf("%s: md5 %x; want it: %v", c.id, sums.MD5, c.wantMD5)
		}
	}
}
