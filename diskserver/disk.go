package diskserver

import (
	"os"
	"path/filepath"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"shoal"
)

// disk is one data directory, normally the mount point of one filesystem.
// Objects live under objects/ab/<id> (fan-out from the id's first two
// characters), or objects/ab/cd/<id> in a directory made before that
// layout (see layout.go); uploads in progress live in tmp/.
type disk struct {
	dir     string
	flat    bool         // objects/ab/<id>, every fan-out directory made in advance
	unnamed bool         // its filesystem has unnamed temp files (see tempFile)
	temps   atomic.Int64 // temp files open: uploads being written
	// objects is objects/ held open, so that a GET opens its object by
	// a name relative to it (see openObjectAt): the kernel then looks up
	// two names, not every component of the data directory's path. nil
	// where the platform opens by path.
	objects *os.File
	// claimed is what the uploads in flight on this disk's filesystem
	// (shared by the disks on one filesystem) still have to write of
	// their declared lengths: room promised to them, not yet used.
	claimed *atomic.Int64
	// stagedSync makes links into staged/ durable, one fsync of the
	// directory for every create that linked before it started.
	stagedSync *groupSync
	unstaging  unstaging // published objects whose staged names remain
	packs      *packSet  // small staged objects; nil: none on this disk
}

const (
	objectsDir = "objects"
	tmpDir     = "tmp"
	stagedDir  = "staged" // objects written, not yet published (staged.go)
)

// openDisk creates the layout under dir if needed and removes temp files
// left by a crash: they were never renamed into place, so nobody refers to
// them.
func openDisk(dir string) (*disk, error) {
	const op = "diskserver.openDisk"
	d := &disk{dir: dir}
	var err error
	for _, sub := range []string{objectsDir, tmpDir, stagedDir, packsDir} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
			return nil, shoal.E(op, dir, err)
		}
	}
	// staged/ must be durable before the first link into it is.
	if err := syncDir(dir); err != nil {
		return nil, shoal.E(op, dir, err)
	}
	staged := filepath.Join(dir, stagedDir)
	d.stagedSync = &groupSync{do: func() error { return syncDir(staged) }}
	if d.packs, err = openPacks(dir); err != nil {
		return nil, shoal.E(op, dir, err)
	}
	if d.flat, err = prepareObjects(dir); err != nil {
		return nil, shoal.E(op, dir, err)
	}
	stale, err := os.ReadDir(filepath.Join(dir, tmpDir))
	if err != nil {
		return nil, shoal.E(op, dir, err)
	}
	for _, e := range stale {
		if err := os.RemoveAll(filepath.Join(dir, tmpDir, e.Name())); err != nil {
			return nil, shoal.E(op, dir, err)
		}
	}
	d.unnamed = probeUnnamed(filepath.Join(dir, tmpDir))
	if d.objects, err = openObjectsDir(filepath.Join(dir, objectsDir)); err != nil {
		return nil, shoal.E(op, dir, err)
	}
	return d, nil
}

// fanout returns the two directory levels of id: "ab", "cd" for "abcd…";
// short ids are padded with '0' (the file name keeps the real id).
func fanout(id string) (string, string) {
	b := fanoutBytes(id)
	return string(b[0:2]), string(b[2:4])
}

func fanoutBytes(id string) [4]byte {
	var b [4]byte
	for i := range b {
		b[i] = '0'
		if i < len(id) {
			b[i] = id[i]
		}
	}
	return b
}

func (d *disk) objectDir(id string) string {
	a, b := fanout(id)
	if d.flat {
		return filepath.Join(d.dir, objectsDir, a)
	}
	return filepath.Join(d.dir, objectsDir, a, b)
}

// makeObjectDir makes id's fan-out directory, durably, when it does not
// exist (a flat data directory has all of them, layout.go).
func (d *disk) makeObjectDir(id string) error {
	if d.flat {
		return nil
	}
	dir := d.objectDir(id)
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	// A new fan-out directory: its own entries must be durable too.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for _, p := range []string{filepath.Dir(dir), filepath.Dir(filepath.Dir(dir))} {
		if err := syncDir(p); err != nil {
			return err
		}
	}
	return nil
}

func (d *disk) objectPath(id string) string {
	return filepath.Join(d.objectDir(id), id)
}

// relPath is id's path under objects/ ("ab/<id>", or "ab/cd/<id>" in the
// older layout), built in one allocation.
func (d *disk) relPath(id string) string {
	var b [6 + 64]byte
	f := fanoutBytes(id)
	p := append(b[:0], f[0], f[1], '/')
	if !d.flat {
		p = append(p, f[2], f[3], '/')
	}
	return string(append(p, id...))
}

// openObject opens id's file on d for reading.
func (d *disk) openObject(id string) (*os.File, error) {
	if d.objects != nil {
		return openObjectAt(d.objects, d.relPath(id))
	}
	return openObject(d.objectPath(id))
}

// statfs reports the bytes available to us and the filesystem size, and the
// filesystem id so that two directories on one filesystem count once.
func (d *disk) statfs() (avail, total int64, fsid [2]int32, err error) {
	var st unix.Statfs_t
	if err := unix.Statfs(d.dir, &st); err != nil {
		return 0, 0, fsid, shoal.E("diskserver.statfs", d.dir, err)
	}
	bsize := int64(st.Bsize)
	return int64(st.Bavail) * bsize, int64(st.Blocks) * bsize, [2]int32(st.Fsid.Val), nil
}

// syncDir makes a rename or create in dir durable.
func syncDir(dir string) error {
	f, err := openObject(dir) // as objects are opened: no poller
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
