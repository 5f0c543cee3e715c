package diskserver

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// The object layout of a data directory. A directory made by this version
// is flat: objects/ab/<id>, its 256 fan-out directories made (and made
// durable) once, when the directory is. Directories made before keep
// objects/ab/cd/<id>: there, the first create into each of the 65,536
// leaf directories paid a mkdir and two directory fsyncs, which in a
// young store was nearly every create (four fsyncs a create instead of
// two). A flat directory holds 4,000 objects per fan-out directory at a
// million objects, which ext4's hashed directories (and every filesystem
// shoal runs on) look up in constant time.
//
// The layout is recorded in layoutFile, beside objects/ and tmp/, so a
// directory never changes layout under its objects.
const (
	layoutFile = "LAYOUT"
	layoutFlat = "objects/ab/<id>\n"
)

// prepareObjects decides dir's layout: flat if layoutFile says so or if
// objects/ is empty (a new directory, which it then marks), else the two
// level layout of older directories. A flat directory gets every missing
// fan-out directory.
func prepareObjects(dir string) (flat bool, err error) {
	marker := filepath.Join(dir, layoutFile)
	b, err := os.ReadFile(marker)
	switch {
	case err == nil:
		if string(b) != layoutFlat {
			return false, fmt.Errorf("%s: unknown object layout %q", marker, b)
		}
	case errors.Is(err, fs.ErrNotExist):
		objects := filepath.Join(dir, objectsDir)
		entries, err := os.ReadDir(objects)
		if err != nil {
			return false, err
		}
		if len(entries) > 0 {
			return false, nil // made before the flat layout
		}
		// The mark first: a crash before the fan-out directories exist
		// leaves a flat directory that the next start completes.
		if err := writeDurably(marker, []byte(layoutFlat)); err != nil {
			return false, err
		}
	default:
		return false, err
	}
	return true, makeFanout(filepath.Join(dir, objectsDir))
}

// makeFanout makes the 256 fan-out directories under objects that do not
// exist yet, durably.
func makeFanout(objects string) error {
	made := false
	for i := range 256 {
		err := os.Mkdir(filepath.Join(objects, fmt.Sprintf("%02x", i)), 0o700)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return err
		}
		made = true
	}
	if !made {
		return nil
	}
	return syncDir(objects)
}

// writeDurably creates path with b, fsyncing it and its directory.
func writeDurably(path string, b []byte) error {
	if err := writeSynced(path, b, os.O_EXCL); err != nil {
		os.Remove(path)
		return err
	}
	return syncDir(filepath.Dir(path))
}

// writeSynced writes b to path (opened with os.O_CREATE and flags) and
// fsyncs it, not its directory.
func writeSynced(path string, b []byte, flags int) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|flags, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
