//go:build unix

package diskserver

import (
	"os"
	"syscall"
)

// openObject opens an object file for reading. os.Open would offer the
// file to the runtime's poller (four fcntl calls and a failing epoll_ctl
// for a regular file, on every GET); opened with syscall.Open, os.NewFile
// sees a blocking descriptor and leaves it out, one fcntl in all. The
// file is read with pread or sent with sendfile, both of which block
// briefly on a local disk whatever the poller does.
func openObject(path string) (*os.File, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: path, Err: err}
		}
		return os.NewFile(uintptr(fd), path), nil
	}
}
