//go:build unix

package diskserver

import (
	"os"

	"golang.org/x/sys/unix"
)

// openObject opens an object file for reading. os.Open would offer the
// file to the runtime's poller (four fcntl calls and a failing epoll_ctl
// for a regular file, on every GET); opened with openat(2), os.NewFile
// sees a blocking descriptor and leaves it out, one fcntl in all. The
// file is read with pread or sent with sendfile, both of which block
// briefly on a local disk whatever the poller does.
func openObject(path string) (*os.File, error) {
	return openObjectAt(nil, path)
}

// openObjectAt opens name, relative to the open directory dir (nil: the
// working directory, or name is absolute), as openObject does.
func openObjectAt(dir *os.File, name string) (*os.File, error) {
	dirfd := unix.AT_FDCWD
	if dir != nil {
		dirfd = int(dir.Fd()) // a blocking descriptor (openObjectsDir): Fd costs nothing
	}
	for {
		fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: name, Err: err}
		}
		return os.NewFile(uintptr(fd), name), nil
	}
}

// openObjectsDir holds a disk's objects/ directory open for openObjectAt.
// The descriptor lives as long as the disk (the file's finalizer closes
// it when a Store is dropped, as tests do).
func openObjectsDir(path string) (*os.File, error) {
	return openObject(path)
}
