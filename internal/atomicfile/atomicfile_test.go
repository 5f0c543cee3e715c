package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWrite: the file holds the new bytes with the mode asked for, an
// old file is replaced, and no temporary file is left beside it.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "f")
	for _, data := range []string{"first", "second"} {
		if err := Write(name, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(name)
		fi, _ := os.Stat(name)
		if err != nil || string(b) != data || fi.Mode().Perm() != 0o600 {
			t.Errorf("after writing %q: %q, mode %v, %v", data, b, fi.Mode().Perm(), err)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d files in the directory, want 1", len(ents))
	}
	if err := Write(filepath.Join(dir, "missing", "f"), nil, 0o600); err == nil {
		t.Error("a write into a missing directory succeeded")
	}
}
