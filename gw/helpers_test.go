package gw

import (
	"crypto/md5"
	"fmt"
	"hash/adler32"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func idFor(i int) string { return fmt.Sprintf("%04x", 0xa000+i) }

// plain computes the reference sums of user bytes.
type plain struct{}

func (plain) sums(b []byte) (uint32, [16]byte, int) {
	return adler32.Checksum(b), md5.Sum(b), len(b)
}

// shardFile finds the file holding object id under a data dir.
func shardFile(t testing.TB, dir, id string) string {
	t.Helper()
	var found string
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() && e.Name() == id && !strings.Contains(p[len(dir):], "tmp") {
			found = p
		}
		return nil
	})
	if found == "" {
		t.Fatalf("no file for %s under %s", id, dir)
	}
	return found
}

// flipBytes corrupts n bytes of a file at off (a stripe's chunk region).
func flipBytes(t testing.TB, path string, off int64, n int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, n)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	for i := range b {
		b[i] ^= 0xa5
	}
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

// pairs returns every pair of indices below n.
func pairs(n int) [][2]int {
	var out [][2]int
	for a := range n {
		for b := a + 1; b < n; b++ {
			out = append(out, [2]int{a, b})
		}
	}
	return out
}

// walkFiles calls fn with the path of every regular file under dir.
func walkFiles(dir string, fn func(string)) {
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() {
			fn(p)
		}
		return nil
	})
}
