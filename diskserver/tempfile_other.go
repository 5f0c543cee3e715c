//go:build !linux

package diskserver

import (
	"errors"
	"os"
)

var errNoUnnamed = errors.New("unnamed temp files are Linux only")

func openUnnamed(string) (*os.File, error) { return nil, errNoUnnamed }

func linkUnnamed(*os.File, string) error { return errNoUnnamed }

// syncObjects makes durable the entries made in dirs: an fsync of each.
func syncObjects(_ string, dirs map[string]bool) error {
	for d := range dirs {
		if err := syncDir(d); err != nil {
			return err
		}
	}
	return nil
}
