package diskserver

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"shoal"
	"shoal/storetest"
)

// TestOpenFileHeldAcrossRemove: a reader that opened an object before
// its Remove (a GET being sent) still reads it whole; the store then
// answers not found, and a new object under the id is read as itself.
func TestOpenFileHeldAcrossRemove(t *testing.T) {
	s, err := NewStore([]string{t.TempDir()}, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	data := storetest.Data(7, 100_000)
	if _, _, err := s.Create(ctx, "beef", bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	a, err := s.Open(ctx, "beef")
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Open(ctx, "beef") // the same kept file
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	b.Close() // a second Close is harmless
	if err := s.Remove(ctx, "beef"); err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(io.NewSectionReader(a, 0, a.Size())); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("the held reader read %d bytes (%v), equal %v", len(got), err, bytes.Equal(got, data))
	}
	a.Close()
	if _, err := s.Open(ctx, "beef"); !shoal.IsKind(err, shoal.KindNotFound) {
		t.Fatalf("Open after Remove: %v", err)
	}
	if n := len(s.open.m); n != 0 {
		t.Errorf("%d files kept after their object's Remove", n)
	}
}

// TestOpenFilesBounded: past its bound the store closes idle kept files
// (an eighth of the bound at a time) and never one that a reader holds.
func TestOpenFilesBounded(t *testing.T) {
	o := newOpenFiles(8)
	dir := t.TempDir()
	var held []*handle
	var all []*handle
	for i := range 20 {
		p := filepath.Join(dir, strconv.Itoa(i))
		if err := os.WriteFile(p, []byte(p), 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		_, removals := o.get(p)
		h := o.add(p, &handle{f: f}, removals)
		all = append(all, h)
		if i < 3 {
			held = append(held, h) // three readers never let go
			continue
		}
		o.release(h)
	}
	if len(o.m) > 8 {
		t.Errorf("%d files kept, bound 8", len(o.m))
	}
	open := 0
	for _, h := range all {
		if _, err := h.f.Stat(); err == nil {
			open++
			if !h.kept && h.refs == 0 {
				t.Errorf("a file neither kept nor held is open")
			}
		} else if h.refs > 0 {
			t.Errorf("a held file was closed: %v", err)
		}
	}
	if open > 8+3 {
		t.Errorf("%d files open, at most the bound and the held ones", open)
	}
	for _, h := range held {
		o.release(h)
	}
}

// TestOpenStraddlingRemoveNotKept: a file opened before a Remove and
// offered to the cache after it (it may be the file Remove unlinked) is
// read by its reader and then closed, not kept for later readers.
func TestOpenStraddlingRemoveNotKept(t *testing.T) {
	o := newOpenFiles(8)
	f, err := os.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	_, removals := o.get("ab")
	o.forget("ab") // Remove ran meanwhile
	h := o.add("ab", &handle{f: f}, removals)
	if h.kept || len(o.m) != 0 {
		t.Fatal("a file opened across a Remove was kept")
	}
	o.release(h)
	if _, err := f.Stat(); err == nil {
		t.Error("its reader done, the file is still open")
	}
}

// TestKeptFileDeletedBehindTheStore: an object file deleted or replaced
// by something other than Remove (a lost disk, an operator, a test of
// scrub) is seen as such at the next open, as if no file were kept.
func TestKeptFileDeletedBehindTheStore(t *testing.T) {
	dir := t.TempDir()
	s, err := NewStore([]string{dir}, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, id := range []string{"d0", "d1"} {
		if _, _, err := s.Create(ctx, id, bytes.NewReader([]byte("object "+id))); err != nil {
			t.Fatal(err)
		}
		o, err := s.Open(ctx, id) // now kept
		if err != nil {
			t.Fatal(err)
		}
		o.Close()
	}
	// Another name of the file (as a staged name lingers after publish)
	// does not make the object's own name present.
	if err := os.Link(s.disks[0].objectPath("d0"), filepath.Join(dir, "other-name")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(s.disks[0].objectPath("d0")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open(ctx, "d0"); !shoal.IsKind(err, shoal.KindNotFound) {
		t.Errorf("Open of an object file deleted behind the store: %v, want not found", err)
	}
	p := s.disks[0].objectPath("d1")
	if err := os.WriteFile(p+".new", []byte("replaced!"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(p+".new", p); err != nil {
		t.Fatal(err)
	}
	o, err := s.Open(ctx, "d1")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if got, _ := io.ReadAll(io.NewSectionReader(o, 0, o.Size())); string(got) != "replaced!" {
		t.Errorf("Open of an object file replaced behind the store read %q", got)
	}
}
