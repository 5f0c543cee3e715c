package diskserver

import (
	"os"
	"path/filepath"
)

// tempFile is an object being written: an unnamed file (O_TMPFILE, where
// the filesystem has it) or a named one under tmp/. Creating a named
// temp file takes the tmp/ directory's lock for the whole inode
// allocation, so every upload of the data server queued on it (perf:
// rwsem_spin_on_owner was 10 % of the kernel's time under a 16-connection
// create load, the allocation itself slow on a filesystem where many
// files were recently deleted); an unnamed one locks no directory, and
// gets its only name when it is linked into place.
type tempFile struct {
	*os.File
	name string // "" for an unnamed file
	d    *disk
}

// newTemp opens a temp file for object id on d.
func (d *disk) newTemp(id string) (*tempFile, error) {
	if d.unnamed {
		if f, err := openUnnamed(filepath.Join(d.dir, tmpDir)); err == nil {
			d.temps.Add(1)
			return &tempFile{File: f, d: d}, nil
		}
		// Not here after all (a filesystem mounted over tmp/?): named.
	}
	f, err := os.CreateTemp(filepath.Join(d.dir, tmpDir), id+".*")
	if err != nil {
		return nil, err
	}
	d.temps.Add(1)
	return &tempFile{File: f, name: f.Name(), d: d}, nil
}

// link gives the written, synced file the name dst, which must not
// exist (a link never replaces: an object, once created, never changes).
func (t *tempFile) link(dst string) error {
	if t.name == "" {
		return linkUnnamed(t.File, dst)
	}
	return os.Link(t.name, dst)
}

// discard closes the file and drops its temp name: an unnamed file that
// was not linked vanishes with its last descriptor.
func (t *tempFile) discard() {
	t.Close()
	if t.name != "" {
		os.Remove(t.name)
	}
	t.d.temps.Add(-1)
}

// probeUnnamed reports whether unnamed temp files can be created in dir
// and linked into it.
func probeUnnamed(dir string) bool {
	f, err := openUnnamed(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	probe := filepath.Join(dir, ".probe-unnamed")
	os.Remove(probe)
	if err := linkUnnamed(f, probe); err != nil {
		return false
	}
	os.Remove(probe)
	return true
}

// Uploads is how many objects are being written (temp files open).
func (s *Store) Uploads() int64 {
	var n int64
	for _, d := range s.disks {
		n += d.temps.Load()
	}
	return n
}
