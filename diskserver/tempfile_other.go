//go:build !linux

package diskserver

import (
	"errors"
	"os"
)

var errNoUnnamed = errors.New("unnamed temp files are Linux only")

func openUnnamed(string) (*os.File, error) { return nil, errNoUnnamed }

func linkUnnamed(*os.File, string) error { return errNoUnnamed }

// syncObjects makes durable the entries made for objects ids of d: an
// fsync of each fan-out directory they are in.
func syncObjects(d *disk, ids []string) error {
	dirs := map[string]bool{}
	for _, id := range ids {
		dirs[d.objectDir(id)] = true
	}
	for dir := range dirs {
		if err := syncDir(dir); err != nil {
			return err
		}
	}
	return nil
}
