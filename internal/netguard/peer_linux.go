package netguard

import (
	"net"
	"syscall"
)

// peerClosed peeks at c's socket without blocking: end of stream or an
// error (a reset) means the peer is gone; data or nothing yet means not.
func peerClosed(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	closed := false
	var buf [1]byte
	rc.Read(func(fd uintptr) bool {
		n, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case err == syscall.EAGAIN || err == syscall.EINTR:
		case err != nil:
			closed = true
		case n == 0:
			closed = true
		}
		return true
	})
	return closed
}
