//go:build !linux

package diskserver

import (
	"errors"
	"os"
	"time"
)

// fileKey is Linux's (statname_linux.go); elsewhere no file is kept open
// (keyOf says no), so a name is never checked.
type fileKey struct{}

func keyOf(os.FileInfo) (fileKey, bool) { return fileKey{}, false }

func (d *disk) statName(string) (fileKey, int64, time.Time, error) {
	return fileKey{}, 0, time.Time{}, errors.ErrUnsupported
}
