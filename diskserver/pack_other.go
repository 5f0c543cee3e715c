//go:build !linux

package diskserver

import (
	"errors"
	"os"
)

// packsSupported: elsewhere every object is a file of its own.
const packsSupported = false

var errNoPacks = errors.New("packs are Linux only")

func fdatasync(f *os.File) error { return f.Sync() }

func punchHole(*os.File, int64, int64) error { return errNoPacks }

var errNoMoreData = errNoPacks

func seekData(*os.File, int64) (int64, error) { return 0, errNoPacks }

func fillHelps(string) bool { return false }
