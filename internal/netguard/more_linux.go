package netguard

import (
	"net"
	"syscall"
)

// writeMore writes b with MSG_MORE (see FileFollows) on a plain TCP
// connection, and as usual on any other.
func (c *conn) writeMore(b []byte) (int, error) {
	tc, ok := c.Conn.(*net.TCPConn)
	if !ok {
		return c.Conn.Write(b)
	}
	if c.more == nil {
		rc, err := tc.SyscallConn()
		if err != nil {
			return c.Conn.Write(b)
		}
		c.more = &moreWriter{rc: rc}
		c.more.fn = c.more.send // bound once per connection, not per write
	}
	w := c.more
	w.b, w.n, w.err = b, 0, nil
	err := w.rc.Write(w.fn)
	if err == nil {
		err = w.err
	}
	n := w.n
	w.b = nil
	return n, err
}

// moreWriter is the state of writeMore's raw write, kept on the
// connection so that a write allocates nothing.
type moreWriter struct {
	rc  syscall.RawConn
	fn  func(fd uintptr) bool
	b   []byte
	n   int
	err error
}

// send is called by RawConn.Write with the socket; false means "wait
// until it is writable and call again" (the connection's write deadline
// applies to that wait).
func (w *moreWriter) send(fd uintptr) bool {
	for w.n < len(w.b) {
		m, err := syscall.SendmsgN(int(fd), w.b[w.n:], nil, nil, syscall.MSG_MORE|syscall.MSG_NOSIGNAL)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return false
		case err != nil:
			w.err = &net.OpError{Op: "write", Net: "tcp", Err: err}
			return true
		}
		w.n += m
	}
	return true
}
