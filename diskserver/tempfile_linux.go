package diskserver

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// openUnnamed opens an unnamed file (O_TMPFILE) on dir's filesystem.
func openUnnamed(dir string) (*os.File, error) {
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, &os.PathError{Op: "open O_TMPFILE", Path: dir, Err: err}
	}
	return os.NewFile(uintptr(fd), dir+"/(unnamed)"), nil
}

// linkUnnamed names f dst, through /proc/self/fd (linkat with
// AT_EMPTY_PATH would need CAP_DAC_READ_SEARCH).
func linkUnnamed(f *os.File, dst string) error {
	src := "/proc/self/fd/" + strconv.Itoa(int(f.Fd()))
	if err := unix.Linkat(unix.AT_FDCWD, src, unix.AT_FDCWD, dst, unix.AT_SYMLINK_FOLLOW); err != nil {
		return &os.LinkError{Op: "link", Old: src, New: dst, Err: err}
	}
	return nil
}

// syncObjects makes durable the entries made for objects ids of d (their
// names in their fan-out directories): one syncfs of d's filesystem,
// whatever their number.
func syncObjects(d *disk, ids []string) error {
	f, err := os.Open(d.dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.Syncfs(int(f.Fd()))
}
