//go:build !unix

package diskserver

import "os"

// lockDir: no lock where flock(2) is missing.
func lockDir(string) (*os.File, error) { return nil, nil }
