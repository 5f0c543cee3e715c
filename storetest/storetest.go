// Package storetest is the one conformance suite for shoal.BlobStore: every
// implementation (the local diskserver store, its remote client, ec's
// erasure-coded Store and Mirror) calls Run from its tests, which also
// check the optional interfaces (shoal.HeadOpener, shoal.RangeOpener) of
// the stores that have them. It imports only the root package.
package storetest

import (
	"bytes"
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"hash/adler32"
	"io"
	"math/rand/v2"
	"sync"
	"testing"

	"shoal"
)

// Run runs the suite; newStore returns an empty store for each subtest.
func Run(t *testing.T, newStore func(t *testing.T) shoal.BlobStore) {
	tests := []struct {
		name string
		fn   func(*testing.T, shoal.BlobStore)
	}{
		{"CreateOpenRead", testCreateOpenRead},
		{"ReadAtOffsets", testReadAtOffsets},
		{"Empty", testEmpty},
		{"Checksums", testChecksums},
		{"BadIDs", testBadIDs},
		{"Duplicate", testDuplicate},
		{"Missing", testMissing},
		{"RemoveIdempotent", testRemove},
		{"RemoveThenRecreate", testRecreate},
		{"FailingReader", testFailingReader},
		{"Walk", testWalk},
		{"Space", testSpace},
		{"ConcurrentCreates", testConcurrent},
		{"OpenHead", testOpenHead},
		{"OpenRange", testOpenRange},
		{"Staged", testStaged},
		{"Deferred", testDeferred},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, newStore(t)) })
	}
}

// Data returns n deterministic pseudo-random bytes.
func Data(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// Gen returns a reader of n deterministic bytes that holds none of them:
// for files larger than a test wants in memory.
func Gen(n int64) io.Reader { return &genReader{n: n, state: 0x9e3779b97f4a7c15} }

type genReader struct {
	n, off int64
	state  uint64
}

func (g *genReader) Read(p []byte) (int, error) {
	if g.off >= g.n {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), g.n-g.off)]
	for i := range p {
		g.state ^= g.state << 13
		g.state ^= g.state >> 7
		g.state ^= g.state << 17
		p[i] = byte(g.state)
	}
	g.off += int64(len(p))
	return len(p), nil
}

// FailingReader returns the first n bytes of data, then err.
type FailingReader struct {
	Data []byte
	N    int
	Err  error
	off  int
}

func (r *FailingReader) Read(p []byte) (int, error) {
	if r.off >= r.N {
		return 0, r.Err
	}
	n := copy(p, r.Data[r.off:r.N])
	r.off += n
	return n, nil
}

func create(t *testing.T, s shoal.BlobStore, id string, data []byte) (shoal.ObjectInfo, shoal.Sums) {
	t.Helper()
	info, sums, err := s.Create(context.Background(), id, bytes.NewReader(data))
	if err != nil {
		t.Fatalf("Create(%s): %v", id, err)
	}
	if info.ID != id || info.Size != int64(len(data)) {
		t.Fatalf("Create(%s) info = %+v, want id %s size %d", id, info, id, len(data))
	}
	return info, sums
}

func readAll(t *testing.T, s shoal.BlobStore, id string) []byte {
	t.Helper()
	o, err := s.Open(context.Background(), id)
	if err != nil {
		t.Fatalf("Open(%s): %v", id, err)
	}
	defer o.Close()
	got, err := io.ReadAll(io.NewSectionReader(o, 0, o.Size()))
	if err != nil {
		t.Fatalf("read %s: %v", id, err)
	}
	return got
}

func wantKind(t *testing.T, what string, err error, k shoal.Kind) {
	t.Helper()
	if !shoal.IsKind(err, k) {
		t.Errorf("%s: got error %v (kind %v), want kind %v", what, err, shoal.KindOf(err), k)
	}
}

func testCreateOpenRead(t *testing.T, s shoal.BlobStore) {
	data := Data(1, 300_000)
	create(t, s, "0123456789abcdef", data)
	if got := readAll(t, s, "0123456789abcdef"); !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes, differ from the %d written", len(got), len(data))
	}
	create(t, s, "a", []byte("short id"))
	if got := readAll(t, s, "a"); string(got) != "short id" {
		t.Fatalf("read back %q, want %q", got, "short id")
	}
}

func testReadAtOffsets(t *testing.T, s shoal.BlobStore) {
	data := Data(2, 100_000)
	create(t, s, "beef", data)
	o, err := s.Open(context.Background(), "beef")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if o.Size() != int64(len(data)) {
		t.Fatalf("Size() = %d, want %d", o.Size(), len(data))
	}
	for _, c := range []struct{ off, n int }{{0, 1}, {0, 100}, {1, 4096}, {65_535, 3}, {99_990, 10}, {50_000, 50_000}} {
		p := make([]byte, c.n)
		n, err := o.ReadAt(p, int64(c.off))
		if n != c.n || (err != nil && err != io.EOF) {
			t.Errorf("ReadAt(%d bytes at %d) = %d, %v", c.n, c.off, n, err)
			continue
		}
		if !bytes.Equal(p, data[c.off:c.off+c.n]) {
			t.Errorf("ReadAt(%d bytes at %d): wrong bytes", c.n, c.off)
		}
	}
	// Past the end: fewer bytes and io.EOF, as io.ReaderAt requires.
	p := make([]byte, 20)
	n, err := o.ReadAt(p, 99_990)
	if n != 10 || err != io.EOF || !bytes.Equal(p[:n], data[99_990:]) {
		t.Errorf("ReadAt across the end = %d, %v; want 10, EOF", n, err)
	}
	if n, err := o.ReadAt(p, 100_000); n != 0 || err != io.EOF {
		t.Errorf("ReadAt at the end = %d, %v; want 0, EOF", n, err)
	}
}

func testEmpty(t *testing.T, s shoal.BlobStore) {
	_, sums := create(t, s, "e0", nil)
	if sums.Adler32 != 1 {
		t.Errorf("adler32 of nothing = %08x, want 00000001", sums.Adler32)
	}
	if got := readAll(t, s, "e0"); len(got) != 0 {
		t.Errorf("read %d bytes from an empty object", len(got))
	}
}

func testChecksums(t *testing.T, s shoal.BlobStore) {
	for i, n := range []int{1, 5552, 1 << 20} {
		data := Data(uint64(10+i), n)
		id := fmt.Sprintf("c%d", i)
		_, sums := create(t, s, id, data)
		if want := adler32.Checksum(data); sums.Adler32 != want {
			t.Errorf("%s: adler32 = %08x, want %08x", id, sums.Adler32, want)
		}
		if want := md5.Sum(data); !bytes.Equal(sums.MD5, want[:]) {
			t.Errorf("%s: md5 = %x, want %x", id, sums.MD5, want)
		}
	}
}

var badIDs = []string{"", "ABC", "../etc", "a/b", "xyz", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0", "a b", "a%2f"}

func testBadIDs(t *testing.T, s shoal.BlobStore) {
	ctx := context.Background()
	for _, id := range badIDs {
		_, _, err := s.Create(ctx, id, bytes.NewReader([]byte("x")))
		wantKind(t, fmt.Sprintf("Create(%q)", id), err, shoal.KindInvalid)
		_, err = s.Open(ctx, id)
		wantKind(t, fmt.Sprintf("Open(%q)", id), err, shoal.KindInvalid)
		wantKind(t, fmt.Sprintf("Remove(%q)", id), s.Remove(ctx, id), shoal.KindInvalid)
	}
	n := 0
	if err := s.Walk(ctx, func(shoal.ObjectInfo) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("Walk lists %d objects after only bad creates", n)
	}
}

func testDuplicate(t *testing.T, s shoal.BlobStore) {
	create(t, s, "d1", []byte("first"))
	_, _, err := s.Create(context.Background(), "d1", bytes.NewReader([]byte("second")))
	wantKind(t, "second Create", err, shoal.KindExist)
	if got := readAll(t, s, "d1"); string(got) != "first" {
		t.Errorf("after duplicate create read %q, want %q", got, "first")
	}
}

func testMissing(t *testing.T, s shoal.BlobStore) {
	_, err := s.Open(context.Background(), "deadbeef")
	wantKind(t, "Open missing", err, shoal.KindNotFound)
}

func testRemove(t *testing.T, s shoal.BlobStore) {
	ctx := context.Background()
	create(t, s, "f00d", []byte("bye"))
	for i := range 2 {
		if err := s.Remove(ctx, "f00d"); err != nil {
			t.Fatalf("Remove #%d: %v", i+1, err)
		}
	}
	_, err := s.Open(ctx, "f00d")
	wantKind(t, "Open removed", err, shoal.KindNotFound)
	if err := s.Remove(ctx, "0badf00d"); err != nil {
		t.Errorf("Remove never-created: %v", err)
	}
	// The id is free again.
	create(t, s, "f00d", []byte("again"))
}

// testRecreate: an id read, removed and created again reads as its new
// bytes, even while a reader of the old object is still open (a store
// that keeps objects open for their readers must drop them on Remove).
func testRecreate(t *testing.T, s shoal.BlobStore) {
	ctx := context.Background()
	create(t, s, "cafe01", []byte("the first object"))
	if got := readAll(t, s, "cafe01"); string(got) != "the first object" {
		t.Fatalf("read %q", got)
	}
	held, err := s.Open(ctx, "cafe01")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if err := s.Remove(ctx, "cafe01"); err != nil {
		t.Fatal(err)
	}
	create(t, s, "cafe01", []byte("its successor, longer"))
	for range 2 {
		if got := readAll(t, s, "cafe01"); string(got) != "its successor, longer" {
			t.Fatalf("after Remove and Create, read %q", got)
		}
	}
}

func testFailingReader(t *testing.T, s shoal.BlobStore) {
	ctx := context.Background()
	data := Data(3, 1<<20)
	boom := errors.New("client went away")
	_, _, err := s.Create(ctx, "fa11", &FailingReader{Data: data, N: len(data) / 2, Err: boom})
	if err == nil {
		t.Fatal("Create from a failing reader succeeded")
	}
	_, err = s.Open(ctx, "fa11")
	wantKind(t, "Open after failed create", err, shoal.KindNotFound)
	s.Walk(ctx, func(o shoal.ObjectInfo) error {
		t.Errorf("Walk lists %q after a failed create", o.ID)
		return nil
	})
	// A failed create does not block the id.
	create(t, s, "fa11", data)
}

func testWalk(t *testing.T, s shoal.BlobStore) {
	want := map[string]int64{}
	for i := range 20 {
		id := fmt.Sprintf("%x", 0x1000+i*7919)
		data := Data(uint64(i), i*100)
		create(t, s, id, data)
		want[id] = int64(len(data))
	}
	got := map[string]int64{}
	err := s.Walk(context.Background(), func(o shoal.ObjectInfo) error {
		if _, dup := got[o.ID]; dup {
			t.Errorf("Walk lists %q twice", o.ID)
		}
		got[o.ID] = o.Size
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Errorf("Walk listed %d objects, want %d", len(got), len(want))
	}
	for id, size := range want {
		if got[id] != size {
			t.Errorf("Walk: %s size %d, want %d", id, got[id], size)
		}
	}
	// An error from fn stops the walk and is returned.
	stop := errors.New("stop")
	calls := 0
	err = s.Walk(context.Background(), func(shoal.ObjectInfo) error { calls++; return stop })
	if err == nil || calls != 1 {
		t.Errorf("Walk with failing fn: err %v after %d calls, want an error after 1", err, calls)
	}
}

func testSpace(t *testing.T, s shoal.BlobStore) {
	sp, err := s.Space(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if sp.Total <= 0 || sp.Free < 0 || sp.Free > sp.Total {
		t.Errorf("Space = %+v, want 0 ≤ Free ≤ Total and Total > 0", sp)
	}
}

func testConcurrent(t *testing.T, s shoal.BlobStore) {
	const n = 16
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			id := fmt.Sprintf("cc%02x", i)
			_, _, errs[i] = s.Create(context.Background(), id, bytes.NewReader(Data(uint64(i), 50_000+i)))
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Create #%d: %v", i, err)
		}
	}
	for i := range n {
		id := fmt.Sprintf("cc%02x", i)
		if got := readAll(t, s, id); !bytes.Equal(got, Data(uint64(i), 50_000+i)) {
			t.Errorf("%s: wrong content", id)
		}
	}
	// The same id created concurrently: exactly one wins.
	var wins, exists int
	var mu sync.Mutex
	for i := range n {
		wg.Go(func() {
			_, _, err := s.Create(context.Background(), "5a5e", bytes.NewReader(Data(uint64(i), 20_000)))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case shoal.IsKind(err, shoal.KindExist):
				exists++
			default:
				t.Errorf("concurrent Create of one id: %v", err)
			}
		})
	}
	wg.Wait()
	if wins != 1 || exists != n-1 {
		t.Errorf("concurrent creates of one id: %d won, %d KindExist; want 1 and %d", wins, exists, n-1)
	}
}

// testOpenHead checks the optional shoal.HeadOpener: the first bytes and
// the size in one call, the whole of a shorter object, an empty one, a
// missing one; the object stays readable past the head.
func testOpenHead(t *testing.T, s shoal.BlobStore) {
	ho, ok := s.(shoal.HeadOpener)
	if !ok {
		return // optional: Open serves such stores
	}
	ctx := context.Background()
	data := Data(3, 100_000)
	create(t, s, "ab", data)
	create(t, s, "e1", nil)
	for _, c := range []struct {
		id   string
		head int
		want []byte
	}{
		{"ab", 1000, data[:1000]},
		{"ab", 100_000, data},
		{"ab", 200_000, data},
		{"e1", 10, nil},
	} {
		buf := make([]byte, c.head)
		obj, n, err := ho.OpenHead(ctx, c.id, buf)
		if err != nil {
			t.Errorf("OpenHead(%s, %d bytes): %v", c.id, c.head, err)
			continue
		}
		size := int64(len(data))
		if c.id == "e1" {
			size = 0
		}
		if obj.Size() != size || !bytes.Equal(buf[:n], c.want) {
			t.Errorf("OpenHead(%s, %d bytes): size %d, %d head bytes; want %d, %d", c.id, c.head, obj.Size(), n, size, len(c.want))
		}
		if size > 0 {
			p := make([]byte, 10)
			if n, err := obj.ReadAt(p, size-10); n != 10 || (err != nil && err != io.EOF) || !bytes.Equal(p, data[size-10:]) {
				t.Errorf("ReadAt past the head of %s: %d, %v", c.id, n, err)
			}
		}
		obj.Close()
	}
	_, _, err := ho.OpenHead(ctx, "dead", make([]byte, 10))
	wantKind(t, "OpenHead of a missing object", err, shoal.KindNotFound)
}

// testOpenRange checks the optional shoal.RangeOpener: exactly the bytes
// of spans at the start, the middle and the end, a whole object, a reader
// closed half-way, a span past the end (an error, at open or at the
// latest when read), a missing object.
func testOpenRange(t *testing.T, s shoal.BlobStore) {
	ro, ok := s.(shoal.RangeOpener)
	if !ok {
		return // optional: ReadAt serves such stores
	}
	ctx := context.Background()
	data := Data(4, 300_000)
	create(t, s, "ab", data)
	for _, c := range []struct{ off, n int64 }{{0, 1}, {0, 1000}, {12_345, 100_000}, {299_990, 10}, {0, 300_000}} {
		r, err := ro.OpenRange(ctx, "ab", c.off, c.n)
		if err != nil {
			t.Errorf("OpenRange(%d, %d): %v", c.off, c.n, err)
			continue
		}
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil || !bytes.Equal(got, data[c.off:c.off+c.n]) {
			t.Errorf("OpenRange(%d, %d): %d bytes, %v; want the %d bytes there", c.off, c.n, len(got), err, c.n)
		}
	}
	r, err := ro.OpenRange(ctx, "ab", 1000, 200_000)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(r, make([]byte, 10)); err != nil {
		t.Errorf("reading the start of a span: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Errorf("closing a span read half-way: %v", err)
	}
	for _, c := range []struct{ off, n int64 }{{299_990, 11}, {300_000, 1}, {400_000, 5}} {
		r, err := ro.OpenRange(ctx, "ab", c.off, c.n)
		if err == nil {
			var got []byte
			got, err = io.ReadAll(r)
			r.Close()
			if err == nil && int64(len(got)) != c.n {
				err = fmt.Errorf("%d bytes", len(got))
			}
			if err == nil {
				t.Errorf("OpenRange(%d, %d) of a %d-byte object: no error", c.off, c.n, len(data))
			}
		}
	}
	_, err = ro.OpenRange(ctx, "dead", 0, 10)
	wantKind(t, "OpenRange of a missing object", err, shoal.KindNotFound)
}

// testStaged checks the optional shoal.StagedCreator: a staged object is
// listed by Staged and invisible to Open and Walk until Publish, then an
// object like any other, bytes exact; Remove drops a staged one; Publish
// of what is not staged is KindNotFound; many concurrent stagings all
// land.
func testStaged(t *testing.T, s shoal.BlobStore) {
	st, ok := s.(shoal.StagedCreator)
	if !ok {
		return // optional: md reserves before it creates in such stores
	}
	ctx := context.Background()
	data := Data(5, 20_000)
	info, sums, err := st.CreateStaged(ctx, "a1", bytes.NewReader(data), int64(len(data)))
	if err != nil || info.Size != int64(len(data)) || sums.Adler32 != adler32.Checksum(data) {
		t.Fatalf("CreateStaged: %+v %+v %v", info, sums, err)
	}
	if _, _, err := st.CreateStaged(ctx, "b2", bytes.NewReader(nil), -1); err != nil {
		t.Fatal(err)
	}
	_, err = s.Open(ctx, "a1")
	wantKind(t, "Open of a staged object", err, shoal.KindNotFound)
	walked := 0
	if err := s.Walk(ctx, func(shoal.ObjectInfo) error { walked++; return nil }); err != nil || walked != 0 {
		t.Errorf("Walk saw %d objects with only staged ones (%v)", walked, err)
	}
	if ids, err := st.Staged(ctx); err != nil || !sameSet(ids, "a1", "b2") {
		t.Errorf("Staged = %v, %v; want a1 b2", ids, err)
	}
	if err := st.Publish(ctx, "a1"); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, s, "a1"); !bytes.Equal(got, data) {
		t.Errorf("published object: %d bytes, want its %d", len(got), len(data))
	}
	if err := s.Remove(ctx, "b2"); err != nil {
		t.Fatal(err)
	}
	if ids, err := st.Staged(ctx); err != nil || len(ids) != 0 {
		t.Errorf("Staged after a publish and a remove = %v, %v; want none", ids, err)
	}
	wantKind(t, "Publish of a removed staged object", st.Publish(ctx, "b2"), shoal.KindNotFound)
	wantKind(t, "Publish of an object never staged", st.Publish(ctx, "c3"), shoal.KindNotFound)

	const n = 32
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			d := Data(uint64(i), 1000+i)
			if _, _, err := st.CreateStaged(ctx, fmt.Sprintf("d%03x", i), bytes.NewReader(d), int64(len(d))); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent CreateStaged: %v", err)
	}
	if ids, _ := st.Staged(ctx); len(ids) != n {
		t.Errorf("%d objects staged concurrently, Staged lists %d", n, len(ids))
	}
}

func sameSet(got []string, want ...string) bool {
	if len(got) != len(want) {
		return false
	}
	seen := map[string]bool{}
	for _, g := range got {
		seen[g] = true
	}
	for _, w := range want {
		if !seen[w] {
			return false
		}
	}
	return true
}
