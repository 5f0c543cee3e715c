package e2e

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFilesOthersCanRead: everything `shoal all` creates under its data
// directory (catalog and its WAL, secret, objects, temp and id files) is
// 0600 and every directory 0700, and a data directory an older version
// left group-readable is tightened at start.
func TestFilesOthersCanRead(t *testing.T) {
	data := t.TempDir()
	if err := os.Chmod(data, 0o755); err != nil {
		t.Fatal(err)
	}
	n := startShoal(t, data)
	for _, size := range []int{100, 64 << 10} { // inline, then on disk
		if r := do("PUT", fmt.Sprintf("%s/f%d", n.URL, size), strings.Repeat("y", size)); r.status != 201 {
			t.Fatalf("PUT: %v", r)
		}
	}
	var files, dirs int
	err := filepath.WalkDir(data, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			dirs++
			if fi.Mode().Perm() != 0o700 {
				t.Errorf("directory %s has mode %v, want 0700", p, fi.Mode().Perm())
			}
			return nil
		}
		files++
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("file %s has mode %v: others can read it", p, fi.Mode().Perm())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"catalog.db", "catalog.db-wal", "secret"} {
		if _, err := os.Stat(filepath.Join(data, want)); err != nil {
			t.Errorf("%s: %v", want, err)
		}
	}
	if files < 5 || dirs < 4 {
		t.Errorf("walked %d files and %d directories: expected the catalog, secret, objects", files, dirs)
	}
}
