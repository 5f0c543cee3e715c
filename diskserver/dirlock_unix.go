//go:build unix

package diskserver

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"shoal"
)

// lockFile is held by the data server that uses a data directory, for as
// long as it runs (flock: the kernel drops it when the process dies).
const lockFile = "LOCK"

// lockDir takes dir's lock, or says which directory another process
// (or another server in this one) uses.
func lockDir(dir string) (*os.File, error) {
	const op = "diskserver.New"
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, shoal.E(op, dir, err)
	}
	p := filepath.Join(dir, lockFile)
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, shoal.E(op, dir, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, shoal.Errorf(op, shoal.KindUnavailable,
				"data directory %s is in use by another data server (it holds %s): one server per data directory", dir, p)
		}
		return nil, shoal.E(op, dir, err)
	}
	return f, nil
}
