package storetest

import (
	"os"
	"path/filepath"
	"testing"
)

// Grow makes the object id, a file of its own under a data directory dir
// (objects/ab/<id>), a sparse file that ends with tail at offset at: a
// test of a length past 32-bit ints (4 GiB) without writing 4 GiB.
func Grow(t *testing.T, dir, id string, at int64, tail []byte) {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(dir, "objects", "*", id))
	if len(paths) != 1 {
		t.Fatalf("object file of %s under %s: %v", id, dir, paths)
	}
	f, err := os.OpenFile(paths[0], os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(tail, at); err != nil { // the hole before it reads as zeros
		t.Fatal(err)
	}
}
