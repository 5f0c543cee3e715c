package diskserver

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"shoal"
)

// TestVanishedDiskIsNotFull: a data directory removed under a running
// store is reported as what it is, not as a full disk: with every
// directory gone a write is KindUnavailable naming the statfs error;
// with one gone and the others full it is KindInsufficient naming the
// gone one too; with one gone and another with room the write goes there.
func TestVanishedDiskIsNotFull(t *testing.T) {
	ctx := t.Context()
	twoDisks := func(reserve int64) (*Store, string, string) {
		t.Helper()
		a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
		s, err := NewStore([]string{a, b}, reserve)
		if err != nil {
			t.Fatal(err)
		}
		return s, a, b
	}
	body := func() *bytes.Reader { return bytes.NewReader([]byte("x")) }

	s, a, b := twoDisks(0)
	os.RemoveAll(a)
	os.RemoveAll(b)
	for _, size := range []int64{1, -1} {
		_, _, err := s.CreateSized(ctx, "cc01", body(), size)
		if !shoal.IsKind(err, shoal.KindUnavailable) || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), a) || strings.Contains(err.Error(), "full") {
			t.Errorf("size %d, every data directory gone: %v, want KindUnavailable naming %s, not found, not full", size, err, a)
		}
	}

	s, a, _ = twoDisks(1 << 62) // every readable disk is full
	os.RemoveAll(a)
	_, _, err := s.CreateSized(ctx, "cc02", body(), 1)
	if !shoal.IsKind(err, shoal.KindInsufficient) || !strings.Contains(err.Error(), "disk full") || !strings.Contains(err.Error(), a) {
		t.Errorf("one directory gone, the other full: %v, want KindInsufficient naming %s too", err, a)
	}

	s, a, b = twoDisks(0)
	os.RemoveAll(a)
	if _, _, err := s.CreateSized(ctx, "cc03", body(), 1); err != nil {
		t.Fatalf("one directory gone, the other with room: %v", err)
	}
	if _, err := os.Stat(s.disks[1].objectPath("cc03")); err != nil || s.disks[1].dir != b {
		t.Errorf("the object is not on the remaining disk %s: %v", b, err)
	}
}
