package diskserver

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"

	"shoal"
	"shoal/storetest"
)

// newPackStore is a one-disk store that packs staged objects.
func newPackStore(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := NewStore([]string{dir}, -1)
	if err != nil {
		t.Fatal(err)
	}
	if s.disks[0].packs == nil {
		t.Fatalf("no packs on %s (packsSupported %v)", dir, packsSupported)
	}
	return s
}

func stage(t *testing.T, s *Store, id string, data []byte) {
	t.Helper()
	info, sums, err := s.CreateStaged(context.Background(), id, bytes.NewReader(data), int64(len(data)))
	want := md5.Sum(data)
	if err != nil || info.Size != int64(len(data)) || !bytes.Equal(sums.MD5, want[:]) {
		t.Fatalf("CreateStaged %s: %+v %x %v", id, info, sums.MD5, err)
	}
}

// stageAll stages and publishes objects id(0) … id(n-1), with bytes
// data(i), all at once.
func stageAll(t *testing.T, s *Store, n int, id func(int) string, data func(int) []byte) {
	t.Helper()
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			d := data(i)
			if _, _, err := s.CreateStaged(ctx, id(i), bytes.NewReader(d), int64(len(d))); err != nil {
				errs <- err
				return
			}
			errs <- s.Publish(ctx, id(i))
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// publish publishes ids, staged in s.
func publish(t *testing.T, s *Store, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if err := s.Publish(context.Background(), id); err != nil {
			t.Fatalf("Publish %s: %v", id, err)
		}
	}
}

func wantContent(t *testing.T, s *Store, id string, data []byte) {
	t.Helper()
	o, err := s.Open(context.Background(), id)
	if err != nil {
		t.Fatalf("Open %s: %v", id, err)
	}
	defer o.Close()
	got := make([]byte, o.Size())
	if n, err := o.ReadAt(got, 0); o.Size() != int64(len(data)) || n != len(data) || (err != nil && err != io.EOF) || !bytes.Equal(got, data) {
		t.Fatalf("%s reads %d of %d bytes (%v), equal %v", id, n, len(data), err, bytes.Equal(got, data))
	}
}

func packFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, packsDir, "????????????????"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// allocated is the bytes of blocks the packs of dir take.
func allocated(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	for _, p := range packFiles(t, dir) {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		n += fi.Sys().(*syscall.Stat_t).Blocks * 512
	}
	return n
}

// TestPacksSurviveRestart: what a store reopened on the same directory
// (a restart, or a crash once the states were written) finds: published
// objects with their bytes, staged ones listed by Staged, removed ones
// gone; objects over the pack limit stay files.
func TestPacksSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	s := newPackStore(t, dir)
	ctx := context.Background()
	data := map[string][]byte{}
	for i, n := range []int{1, 4000, 4096 - recHeaderSize, 16 << 10, DefaultPackMax} {
		id := fmt.Sprintf("a%d", i)
		data[id] = storetest.Data(uint64(i), n)
		stage(t, s, id, data[id])
	}
	big := storetest.Data(9, DefaultPackMax+1)
	stage(t, s, "b1", big)
	if s.disks[0].packs.has("b1") {
		t.Fatal("an object over the pack limit went into a pack")
	}
	publish(t, s, "a0", "a1", "a2", "a3", "b1")
	if err := s.Publish(ctx, "a3"); err != nil {
		t.Fatalf("publishing twice: %v", err)
	}
	if err := s.Remove(ctx, "a1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open(ctx, "a4"); shoal.KindOf(err) != shoal.KindNotFound {
		t.Fatalf("staged a4 opens: %v", err)
	}
	if err := s.FlushStaged(); err != nil { // b1's staged name: a clean stop
		t.Fatal(err)
	}

	s2 := newPackStore(t, dir)
	for _, id := range []string{"a0", "a2", "a3"} {
		wantContent(t, s2, id, data[id])
	}
	wantContent(t, s2, "b1", big)
	if _, err := s2.Open(ctx, "a1"); shoal.KindOf(err) != shoal.KindNotFound {
		t.Errorf("removed a1 after a restart: %v", err)
	}
	if ids, err := s2.Staged(ctx); err != nil || !slices.Equal(ids, []string{"a4"}) {
		t.Errorf("Staged after a restart = %v, %v; want [a4]", ids, err)
	}
	var walked []string
	s2.Walk(ctx, func(o shoal.ObjectInfo) error {
		walked = append(walked, o.ID)
		if o.Size != int64(len(data[o.ID])) && o.ID != "b1" {
			t.Errorf("Walk: %s has %d bytes, want %d", o.ID, o.Size, len(data[o.ID]))
		}
		return nil
	})
	slices.Sort(walked)
	if !slices.Equal(walked, []string{"a0", "a2", "a3", "b1"}) {
		t.Errorf("Walk after a restart = %v", walked)
	}
	if _, _, err := s2.CreateStaged(ctx, "a0", bytes.NewReader([]byte("x")), 1); shoal.KindOf(err) != shoal.KindExist {
		t.Errorf("CreateStaged over a packed object: %v, want KindExist", err)
	}
	publish(t, s2, "a4")
	wantContent(t, s2, "a4", data["a4"])
}

// TestPackReadAt: reads of a packed object stop at its end, never in the
// next record.
func TestPackReadAt(t *testing.T) {
	s := newPackStore(t, t.TempDir())
	ctx := context.Background()
	a, b := storetest.Data(1, 5000), storetest.Data(2, 300)
	stage(t, s, "aa", a)
	stage(t, s, "bb", b)
	publish(t, s, "aa", "bb")
	o, err := s.Open(ctx, "aa")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	buf := make([]byte, 100)
	if n, err := o.ReadAt(buf, 4950); n != 50 || err != io.EOF || !bytes.Equal(buf[:50], a[4950:]) {
		t.Errorf("ReadAt across the end: %d, %v", n, err)
	}
	if n, err := o.ReadAt(buf, 5000); n != 0 || err != io.EOF {
		t.Errorf("ReadAt at the end: %d, %v", n, err)
	}
	if n, err := o.ReadAt(buf, 17); n != 100 || err != nil || !bytes.Equal(buf, a[17:117]) {
		t.Errorf("ReadAt inside: %d, %v", n, err)
	}
	f, base := o.(shoal.FileObject).OSFile()
	got := make([]byte, 5000)
	if _, err := f.ReadAt(got, base); err != nil || !bytes.Equal(got, a) {
		t.Errorf("OSFile at its base does not hold the object: %v", err)
	}
}

// TestPackRemoveWhileRead: a removed object stays readable by those who
// opened it before; its blocks are given back once they close it, and
// removing is durable at once.
func TestPackRemoveWhileRead(t *testing.T) {
	withoutFill(t) // the blocks counted are the records'
	dir := t.TempDir()
	s := newPackStore(t, dir)
	ctx := context.Background()
	data := storetest.Data(3, 60<<10)
	for i := range 8 {
		id := fmt.Sprintf("c%d", i)
		stage(t, s, id, data)
		publish(t, s, id)
	}
	before := allocated(t, dir)
	o, err := s.Open(ctx, "c0")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 8 {
		if err := s.Remove(ctx, fmt.Sprintf("c%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Open(ctx, "c0"); shoal.KindOf(err) != shoal.KindNotFound {
		t.Errorf("Open after Remove: %v", err)
	}
	got := make([]byte, len(data))
	if _, err := o.ReadAt(got, 0); err != nil && err != io.EOF || !bytes.Equal(got, data) {
		t.Fatalf("an object removed while open does not read its bytes: %v", err)
	}
	mid := allocated(t, dir)
	o.Close()
	after := allocated(t, dir)
	if !(mid < before && after < mid && before-after >= 8*(60<<10)) {
		t.Errorf("pack blocks: %d before, %d with one removed object open, %d after: space not given back", before, mid, after)
	}
	s2 := newPackStore(t, dir)
	if _, err := s2.Open(ctx, "c0"); shoal.KindOf(err) != shoal.KindNotFound {
		t.Errorf("removed while read, after a restart: %v", err)
	}
}

// TestPackScanSkipsWhatIsNotARecord: the start-up scan indexes records
// only: not a record header inside an object's bytes (even one with the
// pack's nonce), nor a header without its pack's nonce where a crash lost
// a record's own header, nor a record whose bytes end past the end of
// the file (a torn last write).
func TestPackScanSkipsWhatIsNotARecord(t *testing.T) {
	withoutFill(t) // the last record's write is torn where the file ends
	dir := t.TempDir()
	s := newPackStore(t, dir)
	p := s.disks[0].packs

	// An upload that carries a header of the pack's own nonce where a
	// record could start (4096 bytes into its record) must stay data.
	nonce := func() [nonceSize]byte { p.mu.Lock(); defer p.mu.Unlock(); return p.cur.nonce }
	stage(t, s, "d0", []byte("first"))
	forged := make([]byte, 3*packAlign)
	encodeRecordHeader(forged[packAlign-recHeaderSize:], nonce(), recordHeader{id: "eeee", size: 10, state: recPublished})
	var wrong [nonceSize]byte
	encodeRecordHeader(forged[2*packAlign-recHeaderSize:], wrong, recordHeader{id: "ffff", size: 10, state: recPublished})
	stage(t, s, "d1", forged)
	// d2 loses its header block, as a crash could leave it: its data
	// holds a header of a guessed nonce where the scan then looks.
	guessed := make([]byte, 2*packAlign)
	encodeRecordHeader(guessed[packAlign-recHeaderSize:], wrong, recordHeader{id: "ffff", size: 10, state: recPublished})
	stage(t, s, "d2", guessed)
	publish(t, s, "d0", "d1", "d2")
	p.mu.Lock()
	d2 := *p.index["d2"]
	p.mu.Unlock()
	if err := punchHole(d2.p.f, d2.off, packAlign); err != nil {
		t.Fatal(err)
	}
	// A last record whose write was torn: its header, not all its bytes.
	stage(t, s, "d3", storetest.Data(4, 20000))
	p.mu.Lock()
	d3 := *p.index["d3"]
	p.mu.Unlock()
	if err := d3.p.f.Truncate(d3.off + packAlign); err != nil {
		t.Fatal(err)
	}

	s2 := newPackStore(t, dir)
	wantContent(t, s2, "d0", []byte("first"))
	wantContent(t, s2, "d1", forged)
	for _, id := range []string{"eeee", "ffff", "d2", "d3"} {
		if s2.disks[0].packs.has(id) {
			t.Errorf("the scan indexed %s", id)
		}
	}
	// New records go after what the scan found.
	stage(t, s2, "d4", []byte("after"))
	publish(t, s2, "d4")
	wantContent(t, newPackStore(t, dir), "d4", []byte("after"))
}

// TestPackScanChecksStagedBytes: after a crash, a staged record whose
// bytes are not those its header's check names (a write torn into room
// zero-filled ahead) is dropped, one whose bytes are whole is kept; in
// records of either format (CRC32C, or the MD5 of packs written before).
func TestPackScanChecksStagedBytes(t *testing.T) {
	dir := t.TempDir()
	s := newPackStore(t, dir)
	ps := s.disks[0].packs
	data := func(i int) []byte { return storetest.Data(uint64(i), 5000+i) }
	ids := []string{"c0", "c1", "c2", "c3", "c4"}
	for i, id := range ids {
		stage(t, s, id, data(i))
	}
	publish(t, s, "c4")
	record := func(id string) (*pack, int64) {
		ps.mu.Lock()
		defer ps.mu.Unlock()
		r := ps.index[id]
		return r.p, r.off
	}
	torn := func(id string) {
		p, off := record(id)
		if _, err := p.f.WriteAt(make([]byte, 1000), off+recHeaderSize+4000); err != nil {
			t.Fatal(err)
		}
	}
	inMD5Format := func(id string, i int) {
		p, off := record(id)
		b := make([]byte, recHeaderSize)
		if _, err := p.f.ReadAt(b, off); err != nil {
			t.Fatal(err)
		}
		h, ok := parseRecordHeader(b, p.nonce)
		sum := md5.Sum(data(i))
		h.md5 = sum[:]
		encodeRecordHeader(b, p.nonce, h)
		if _, err := p.f.WriteAt(b, off); !ok || err != nil {
			t.Fatalf("rewriting %s's header: %v %v", id, ok, err)
		}
	}
	torn("c1")
	inMD5Format("c2", 2)
	inMD5Format("c3", 3)
	torn("c3")

	s2 := newPackStore(t, dir) // a crash: the scan, not the index
	staged, err := s2.Staged(t.Context())
	slices.Sort(staged) // in no particular order
	if err != nil || !slices.Equal(staged, []string{"c0", "c2"}) {
		t.Errorf("staged after a crash: %v, %v; want [c0 c2] (c1, c3 torn)", staged, err)
	}
	publish(t, s2, "c0", "c2")
	for _, i := range []int{0, 2, 4} {
		wantContent(t, s2, ids[i], data(i))
	}
}

// TestPackRoll: past packRoll a disk starts a new pack; objects in every
// pack stay readable, and concurrent creates share fdatasyncs without
// losing any; after a clean stop the index gives every pack its records.
func TestPackRoll(t *testing.T) {
	old := packRoll
	packRoll = 64 << 10
	defer func() { packRoll = old }()
	dir := t.TempDir()
	s := newPackStore(t, dir)
	const n = 64
	stageAll(t, s, n, func(i int) string { return fmt.Sprintf("e%02x", i) },
		func(i int) []byte { return storetest.Data(uint64(i), 5000+i) })
	if got := len(packFiles(t, dir)); got < 5 {
		t.Errorf("%d packs for %d records of 12 KiB and packs of 64 KiB", got, n)
	}
	s2 := newPackStore(t, dir)
	for i := range n {
		wantContent(t, s2, fmt.Sprintf("e%02x", i), storetest.Data(uint64(i), 5000+i))
	}
	// Settled (as md does after its crash check) and then stopped cleanly:
	// every pack's records come from the index.
	if err := s2.Settled(); err != nil {
		t.Fatal(err)
	}
	if err := s2.FlushStaged(); err != nil {
		t.Fatal(err)
	}
	s3 := newPackStore(t, dir)
	if got := s3.disks[0].packs.scanned; got != 0 {
		t.Errorf("%d packs scanned after a clean stop, want 0 (the index)", got)
	}
	for i := range n {
		wantContent(t, s3, fmt.Sprintf("e%02x", i), storetest.Data(uint64(i), 5000+i))
	}
}

// TestPackHalfMadeRemoved: a pack a crash left without its header (and
// so without records) is removed at start; one with records but a bad
// header stops the start.
func TestPackHalfMadeRemoved(t *testing.T) {
	dir := t.TempDir()
	newPackStore(t, dir)
	half := filepath.Join(dir, packsDir, "00000000000000ff")
	if err := os.WriteFile(half, []byte("shoal"), 0o600); err != nil {
		t.Fatal(err)
	}
	newPackStore(t, dir)
	if _, err := os.Stat(half); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("half-made pack still there: %v", err)
	}
	if err := os.WriteFile(half, make([]byte, 3*packAlign), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := NewStore([]string{dir}, -1); err == nil {
		t.Error("a pack with a bad header was accepted")
	}
}

func TestRecordHeaderRoundTrip(t *testing.T) {
	var nonce [nonceSize]byte
	copy(nonce[:], "0123456789abcdef")
	h := recordHeader{id: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", size: 12345, mtimeNs: 1 << 60,
		adler32: 77, md5: bytes.Repeat([]byte{9}, 16), state: recStaged}
	b := make([]byte, recHeaderSize)
	encodeRecordHeader(b, nonce, h) // the format before CRC32C, still read
	got, ok := parseRecordHeader(b, nonce)
	if !ok || string(b[:8]) != recMagicMD5 || got.id != h.id || got.size != h.size || got.mtimeNs != h.mtimeNs || got.adler32 != 77 || !bytes.Equal(got.md5, h.md5) || got.state != recStaged {
		t.Fatalf("round trip, MD5 format: %+v %v", got, ok)
	}
	h.md5, h.crc = nil, 0xdeadbeef
	encodeRecordHeader(b, nonce, h)
	got, ok = parseRecordHeader(b, nonce)
	if !ok || string(b[:8]) != recMagic || got.id != h.id || got.adler32 != 77 || got.md5 != nil || got.crc != h.crc || got.state != recStaged {
		t.Fatalf("round trip: %+v %v", got, ok)
	}
	odd := slices.Clone(b) // not zeros after the CRC32C: no header of either format
	odd[50] = 1
	binary.LittleEndian.PutUint32(odd[128:], crc32.Checksum(odd[:128], castagnoli))
	if got, ok := parseRecordHeader(odd, nonce); ok {
		t.Errorf("accepted bytes after the CRC32C: %+v", got)
	}
	b[recStateOff] = recRemoved // the state is not under the CRC
	if got, ok := parseRecordHeader(b, nonce); !ok || got.state != recRemoved {
		t.Errorf("state rewritten: %+v %v", got, ok)
	}
	b[70] ^= 1
	if _, ok := parseRecordHeader(b, nonce); ok {
		t.Error("a flipped bit passed the CRC")
	}
	ph := make([]byte, packHdrSize)
	encodePackHeader(ph, nonce)
	if got, ok := parsePackHeader(ph); !ok || got != nonce {
		t.Errorf("pack header round trip: %v", ok)
	}
}

func FuzzParseRecordHeader(f *testing.F) {
	var nonce [nonceSize]byte
	copy(nonce[:], "fuzz-nonce-16byt")
	b := make([]byte, recHeaderSize)
	encodeRecordHeader(b, nonce, recordHeader{id: "abc", size: 3, crc: 7, state: recPublished})
	f.Add(slices.Clone(b))
	encodeRecordHeader(b, nonce, recordHeader{id: "abd", size: 3, md5: make([]byte, 16), state: recStaged})
	f.Add(b)
	f.Add(make([]byte, recHeaderSize))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, ok := parseRecordHeader(b, nonce)
		if !ok {
			return
		}
		if !shoal.ValidObjectID(h.id) || h.size < 0 || h.size > maxPackedSize || h.state < recStaged || h.state > recRemoved {
			t.Fatalf("accepted %+v", h)
		}
		again := make([]byte, recHeaderSize)
		encodeRecordHeader(again, nonce, h)
		if !bytes.Equal(again, b[:recHeaderSize]) {
			t.Fatalf("accepted header does not encode back to itself")
		}
	})
}

func FuzzParsePackHeader(f *testing.F) {
	var nonce [nonceSize]byte
	b := make([]byte, packHdrSize)
	encodePackHeader(b, nonce)
	f.Add(b)
	f.Add([]byte("shoalpk1"))
	f.Fuzz(func(t *testing.T, b []byte) {
		n, ok := parsePackHeader(b)
		if !ok {
			return
		}
		again := make([]byte, packHdrSize)
		encodePackHeader(again, n)
		if !bytes.Equal(again, b[:packHdrSize]) {
			t.Fatalf("accepted header does not encode back to itself")
		}
	})
}

// TestPacksWithoutHoles: on a filesystem that cannot punch holes, packs
// already there stay readable and removable, and new objects are files.
func TestPacksWithoutHoles(t *testing.T) {
	dir := t.TempDir()
	s := newPackStore(t, dir)
	ctx := context.Background()
	stage(t, s, "a0", []byte("packed"))
	publish(t, s, "a0")
	s.disks[0].packs.writable = false
	stage(t, s, "a1", []byte("a file"))
	if s.disks[0].packs.has("a1") {
		t.Error("a new object went into a pack on a filesystem without holes")
	}
	publish(t, s, "a1")
	wantContent(t, s, "a0", []byte("packed"))
	wantContent(t, s, "a1", []byte("a file"))
	if err := s.Remove(ctx, "a0"); err != nil {
		t.Fatal(err)
	}
	if _, err := newPackStore(t, dir).Open(ctx, "a0"); shoal.KindOf(err) != shoal.KindNotFound {
		t.Errorf("a0 removed: %v", err)
	}
}

// TestFailedSyncSticks: once a pack's fdatasync fails, no create on it is
// acknowledged again (a later fdatasync that succeeds would prove nothing
// about the pages the failed one dropped); the next create starts a new
// pack, and the failed one's earlier objects stay readable.
func TestFailedSyncSticks(t *testing.T) {
	dir := t.TempDir()
	s := newPackStore(t, dir)
	ctx := context.Background()
	stage(t, s, "a0", []byte("before"))
	publish(t, s, "a0")
	ps := s.disks[0].packs
	ps.mu.Lock()
	bad := ps.cur
	ps.mu.Unlock()
	fail := errors.New("injected EIO")
	calls := 0
	bad.durable.do = func() error { calls++; return fail }
	if _, _, err := s.CreateStaged(ctx, "a1", bytes.NewReader([]byte("lost")), 4); !errors.Is(err, fail) {
		t.Fatalf("create over a failing fdatasync: %v", err)
	}
	bad.durable.do = func() error { calls++; return nil } // the disk "recovers"
	if err := bad.durable.sync(); !errors.Is(err, fail) || calls != 1 {
		t.Errorf("sync after a failure: %v after %d syncs; want the failure, no new sync", err, calls)
	}
	stage(t, s, "a2", []byte("after"))
	publish(t, s, "a2")
	ps.mu.Lock()
	cur := ps.cur
	ps.mu.Unlock()
	if cur == bad || len(packFiles(t, dir)) != 2 {
		t.Errorf("the create after the failure did not start a new pack (%d packs)", len(packFiles(t, dir)))
	}
	wantContent(t, s, "a0", []byte("before"))
	wantContent(t, s, "a2", []byte("after"))
	if s.disks[0].packs.has("a1") {
		t.Error("the failed create is indexed")
	}
}
