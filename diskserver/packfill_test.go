package diskserver

import (
	"fmt"
	"os"
	"testing"

	"shoal/storetest"
)

// withoutFill turns the zero-filling of packs off for the rest of the test.
func withoutFill(t *testing.T) {
	old := packFillAhead
	packFillAhead = 0
	t.Cleanup(func() { packFillAhead = old })
}

// zeroFilled is s with its packs zero-filled ahead, whatever the
// filesystem of the test's temp dir (fillHelps).
func zeroFilled(s *Store) *Store {
	s.disks[0].packs.zeroFill = true
	return s
}

// settleFills waits for ps's fills to end and returns its current pack.
func settleFills(ps *packSet) *pack {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for _, p := range ps.all {
		for p.filling {
			ps.filledCond.Wait()
		}
	}
	return ps.cur
}

func packSize(t *testing.T, p *pack) int64 {
	t.Helper()
	fi, err := p.f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// cleanStopCut stops s cleanly and checks that p was cut back to its
// records' end, and that the next start (which it returns) reads the
// index rather than scanning the packs.
func cleanStopCut(t *testing.T, s *Store, p *pack, dir string) *Store {
	t.Helper()
	if err := s.Settled(); err != nil {
		t.Fatal(err)
	}
	if err := s.FlushStaged(); err != nil {
		t.Fatal(err)
	}
	if size := packSize(t, p); size != p.end {
		t.Errorf("pack of %d bytes after a clean stop, records up to %d", size, p.end)
	}
	next := newPackStore(t, dir)
	if got := next.disks[0].packs.scanned; got != 0 {
		t.Errorf("%d packs scanned after a clean stop, want 0 (the index)", got)
	}
	return next
}

// TestPackFill: packs are zero-filled ahead of their records, and no
// record is lost to the zeros, however creates and fills interleave; a
// start after a crash gives the zeros' blocks back, and a clean stop cuts
// them off so that the next start reads the index, not the packs.
func TestPackFill(t *testing.T) {
	old := packFillAhead
	packFillAhead = 64 << 10 // a fill every few records: creates run into fills in progress
	defer func() { packFillAhead = old }()
	dir := t.TempDir()
	s := zeroFilled(newPackStore(t, dir))
	const n = 96
	data := func(i int) []byte { return storetest.Data(uint64(i), 16<<10+i) }
	stageAll(t, s, n, func(i int) string { return fmt.Sprintf("f%02x", i) }, data)
	for i := range n {
		wantContent(t, s, fmt.Sprintf("f%02x", i), data(i))
	}
	p := settleFills(s.disks[0].packs)
	if size := packSize(t, p); p.filled <= p.end || size != p.filled {
		t.Fatalf("pack of %d bytes, records up to %d, filled up to %d: not filled ahead", size, p.end, p.filled)
	}

	// A crash: the zeros past the last record are punched out.
	s2 := zeroFilled(newPackStore(t, dir))
	for i := range n {
		wantContent(t, s2, fmt.Sprintf("f%02x", i), data(i))
	}
	p2 := s2.disks[0].packs.cur
	if at, err := seekData(p2.f, p.end); err != errNoMoreData {
		t.Errorf("data at %d past the last record (%d) after a crash: %v", at, p.end, err)
	}
	stage(t, s2, "cafe0", data(0))
	publish(t, s2, "cafe0")
	p2 = settleFills(s2.disks[0].packs)
	if p2.filled <= p2.end {
		t.Errorf("no zeros filled after a restart: records up to %d, filled up to %d", p2.end, p2.filled)
	}

	// A clean stop: the zeros are cut off, and the index is used.
	s3 := cleanStopCut(t, s2, p2, dir)
	for i := range n {
		wantContent(t, s3, fmt.Sprintf("f%02x", i), data(i))
	}
	wantContent(t, s3, "cafe0", data(0))
}

// TestPackFillFails: a pack whose fill fails (here: its file is read-only)
// is appended to as before, and the create that started the fill is not
// hurt by it.
func TestPackFillFails(t *testing.T) {
	dir := t.TempDir()
	s := zeroFilled(newPackStore(t, dir))
	stage(t, s, "cafe1", storetest.Data(1, 1000))
	ps := s.disks[0].packs
	p := settleFills(ps)
	ro, err := os.Open(p.f.Name())
	if err != nil {
		t.Fatal(err)
	}
	ps.mu.Lock()
	rw := p.f
	p.f, p.filled = ro, 0 // the next fill's writes fail
	from, to, ok := ps.fillFrom(p)
	ps.mu.Unlock()
	if !ok {
		t.Fatal("no fill started")
	}
	ps.fill(p, from, to)
	ps.mu.Lock()
	p.f = rw
	ro.Close()
	noFill := p.noFill
	ps.mu.Unlock()
	if !noFill {
		t.Error("a failed fill did not stop the filling of its pack")
	}
	stage(t, s, "cafe2", storetest.Data(2, 1000))
	publish(t, s, "cafe1", "cafe2")
	wantContent(t, s, "cafe2", storetest.Data(2, 1000))

	// A clean stop cuts this pack back to its records too (the zeros of
	// its earlier fill are still there), so the next start reads the index.
	s2 := cleanStopCut(t, s, p, dir)
	wantContent(t, s2, "cafe1", storetest.Data(1, 1000))
	wantContent(t, s2, "cafe2", storetest.Data(2, 1000))
}
