package diskserver

import (
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// fileKey tells files apart: device and inode.
type fileKey struct{ dev, ino uint64 }

// keyOf is the key of an open file's FileInfo.
func keyOf(fi os.FileInfo) (fileKey, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileKey{}, false
	}
	return fileKey{uint64(st.Dev), st.Ino}, true
}

// statName stats id's name under the held objects/ directory: which file
// it leads to, its size and its modification time (one fstatat, a lookup
// of two names).
func (d *disk) statName(id string) (fileKey, int64, time.Time, error) {
	if d.objects == nil {
		return fileKey{}, 0, time.Time{}, syscall.ENOTSUP
	}
	var st unix.Stat_t
	if err := unix.Fstatat(int(d.objects.Fd()), d.relPath(id), &st, 0); err != nil {
		return fileKey{}, 0, time.Time{}, err
	}
	return fileKey{uint64(st.Dev), st.Ino}, st.Size, time.Unix(st.Mtim.Unix()), nil
}
