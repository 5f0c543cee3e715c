package diskserver

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// packsSupported: packs need holes punched where objects are removed, and
// SEEK_DATA to skip them when scanning (Linux: ext4, XFS, btrfs, tmpfs).
const packsSupported = true

// fdatasync makes f's bytes and its size durable.
func fdatasync(f *os.File) error {
	for {
		err := unix.Fdatasync(int(f.Fd()))
		if err != unix.EINTR {
			return err
		}
	}
}

// punchHole frees the blocks of f's n bytes at off (they read as zeros).
func punchHole(f *os.File, off, n int64) error {
	return unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, off, n)
}

// fillHelps reports whether zero-filling a pack ahead of its records
// (packfill.go) spares its fdatasyncs a journal commit on dir's
// filesystem: ext2/3/4 and XFS overwrite blocks in place. Elsewhere (btrfs
// copies on write, tmpfs has no disk) the zeros would be written for
// nothing.
func fillHelps(dir string) bool {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return false
	}
	return st.Type == unix.EXT4_SUPER_MAGIC || st.Type == unix.XFS_SUPER_MAGIC
}

// errNoMoreData is seekData's answer past f's last data.
var errNoMoreData = errors.New("no data beyond offset")

// seekData is the offset of the first byte of data (not a hole) of f at
// or after off.
func seekData(f *os.File, off int64) (int64, error) {
	n, err := unix.Seek(int(f.Fd()), off, unix.SEEK_DATA)
	if errors.Is(err, unix.ENXIO) {
		return 0, errNoMoreData
	}
	return n, err
}
