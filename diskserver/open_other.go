//go:build !unix

package diskserver

import "os"

// openObject opens an object file for reading (see open_unix.go).
func openObject(path string) (*os.File, error) { return os.Open(path) }
