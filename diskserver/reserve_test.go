package diskserver

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"testing"

	"shoal"
	"shoal/internal/testsvc"
)

// smallDisk mounts a tmpfs of size for the test (root only: CI runs as
// root; elsewhere the test is skipped).
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		testsvc.Missing(t, "mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		testsvc.Missing(t, "mount tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

// TestChunkedKeepsReserve: on a 4 MiB disk with a 1 MiB reserve, a
// chunked upload (no length) is stopped before it eats into the reserve
// (KindInsufficient, nothing kept), as one of known length is refused
// at once; the store then says it is full, and is no longer once an
// object is removed.
func TestChunkedKeepsReserve(t *testing.T) {
	dir := smallDisk(t, "4m")
	const reserve = 1 << 20
	s, err := NewStore([]string{dir}, reserve)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, _, err := s.CreateSized(ctx, "aa01", bytes.NewReader(make([]byte, 5<<20)), 5<<20); !shoal.IsKind(err, shoal.KindInsufficient) {
		t.Errorf("known length over the room: %v, want KindInsufficient", err)
	}
	_, _, err = s.CreateSized(ctx, "aa02", io.MultiReader(bytes.NewReader(make([]byte, 8<<20))), -1)
	if !shoal.IsKind(err, shoal.KindInsufficient) {
		t.Fatalf("chunked upload past the room: %v, want KindInsufficient", err)
	}
	avail, _, _, _ := s.disks[0].statfs()
	if avail < reserve {
		t.Errorf("a chunked upload ate into the reserve: %d bytes free, reserve %d", avail, reserve)
	}
	n := 0
	s.Walk(ctx, func(shoal.ObjectInfo) error { n++; return nil })
	if tmp, _ := os.ReadDir(dir + "/" + tmpDir); n != 0 || len(tmp) != 0 {
		t.Errorf("refused uploads left %d objects and %d temp files", n, len(tmp))
	}
	// Fill it with known lengths: then it is full.
	for i := 0; ; i++ {
		id := "bb0" + string(rune('0'+i))
		if _, _, err := s.CreateSized(ctx, id, bytes.NewReader(make([]byte, 512<<10)), 512<<10); err != nil {
			if !shoal.IsKind(err, shoal.KindInsufficient) || i == 0 {
				t.Fatalf("filling: object %d: %v", i, err)
			}
			break
		}
	}
	if err := s.Full(); !shoal.IsKind(err, shoal.KindInsufficient) {
		t.Errorf("Full on a filled disk: %v", err)
	}
	if sp, err := s.Space(ctx); err != nil || sp.Free >= FullBelow {
		t.Errorf("Space of a full disk: %+v, %v", sp, err)
	}
	s.Remove(ctx, "bb00")
	s.Remove(ctx, "bb01")
	if err := s.Full(); err != nil {
		t.Errorf("Full after removals: %v", err)
	}
}
