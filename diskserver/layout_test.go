package diskserver

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"shoal"
)

// A new data directory is flat: LAYOUT says so, the 256 fan-out
// directories exist before any object, and objects land one level down.
func TestNewDirectoryIsFlat(t *testing.T) {
	dir := t.TempDir()
	s, err := NewStore([]string{dir}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, layoutFile)); err != nil || string(b) != layoutFlat {
		t.Fatalf("LAYOUT: %q, %v", b, err)
	}
	fan, err := os.ReadDir(filepath.Join(dir, objectsDir))
	if err != nil || len(fan) != 256 {
		t.Fatalf("%d fan-out directories (%v), want 256", len(fan), err)
	}
	if _, _, err := s.Create(t.Context(), "ff00aa", strings.NewReader("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, objectsDir, "ff", "ff00aa")); err != nil {
		t.Fatal(err)
	}
	// A fan-out directory lost (a crash while they were made) is made
	// again at the next start.
	os.Remove(filepath.Join(dir, objectsDir, "7e"))
	s, err = NewStore([]string{dir}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Create(t.Context(), "7e01", strings.NewReader("y")); err != nil {
		t.Fatalf("create into a fan-out directory made again: %v", err)
	}
}

// A directory made before the flat layout (objects under objects/ab/cd/,
// no LAYOUT) keeps its layout: its objects are found, listed and removed,
// and new ones go where they always went.
func TestTwoLevelDirectoryKeepsItsLayout(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, objectsDir, "ab", "cd")
	if err := os.MkdirAll(old, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(old, "abcd01"), []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := NewStore([]string{dir}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, layoutFile)); !os.IsNotExist(err) {
		t.Errorf("LAYOUT written into a two-level directory: %v", err)
	}
	o, err := s.Open(t.Context(), "abcd01")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(io.NewSectionReader(o, 0, o.Size()))
	o.Close()
	if string(b) != "old" {
		t.Fatalf("old object reads %q", b)
	}
	if _, _, err := s.Create(t.Context(), "1234ff", strings.NewReader("new")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, objectsDir, "12", "34", "1234ff")); err != nil {
		t.Fatalf("new object not in the two-level layout: %v", err)
	}
	var ids []string
	if err := s.Walk(t.Context(), func(oi shoal.ObjectInfo) error { ids = append(ids, oi.ID); return nil }); err != nil {
		t.Fatal(err)
	}
	if strings.Join(ids, ",") != "1234ff,abcd01" {
		t.Errorf("Walk: %v", ids)
	}
	if err := s.Remove(t.Context(), "abcd01"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open(t.Context(), "abcd01"); err == nil {
		t.Error("removed object still opens")
	}
}

// An unknown LAYOUT is refused at start rather than guessed.
func TestUnknownLayoutRefused(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, objectsDir), 0o700)
	os.WriteFile(filepath.Join(dir, layoutFile), []byte("objects/a/b/c/<id>\n"), 0o600)
	if _, err := NewStore([]string{dir}, 0); err == nil || !strings.Contains(err.Error(), "unknown object layout") {
		t.Fatalf("NewStore: %v", err)
	}
}
