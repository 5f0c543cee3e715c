//go:build !unix

package diskserver

import (
	"os"
	"path/filepath"
)

// openObject opens an object file for reading (see open_unix.go).
func openObject(path string) (*os.File, error) { return os.Open(path) }

// openObjectAt opens name under dir by its whole path: no openat here.
func openObjectAt(dir *os.File, name string) (*os.File, error) {
	return os.Open(filepath.Join(dir.Name(), name))
}

// openObjectsDir holds nothing where objects are opened by path.
func openObjectsDir(path string) (*os.File, error) { return nil, nil }
