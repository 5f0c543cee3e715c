package netguard

import (
	"io"
	"net"
	"syscall"
	"time"
)

// sendBody sends a FileBody (bare, or in the io.LimitedReader fasthttp
// hands over) with sendfile(2) at the body's offset, in chunks of at most
// sendChunk under a write deadline each. handled is false for any other
// reader or connection: the caller copies it.
func (c *conn) sendBody(r io.Reader) (total int64, handled bool, err error) {
	limit := int64(-1)
	lr, _ := r.(*io.LimitedReader)
	if lr != nil {
		r, limit = lr.R, lr.N
	}
	b, ok := r.(*FileBody)
	if !ok {
		return 0, false, nil
	}
	w := c.raw()
	if w == nil {
		return 0, false, nil
	}
	want := b.left
	if limit >= 0 {
		want = min(want, limit)
	}
	src := int(b.f.Fd()) // a blocking descriptor (diskserver opens objects so): Fd costs nothing
	for total < want {
		n := min(int64(sendChunk), want-total)
		if c.lim.WriteIdle > 0 {
			c.Conn.SetWriteDeadline(time.Now().Add(c.lim.WriteIdle))
		}
		w.src, w.off, w.left, w.err = src, b.off, n, nil
		err = w.rc.Write(w.sendfileFn)
		if err == nil {
			err = w.err
		}
		m := n - w.left
		b.sent(m)
		total += m
		if lr != nil {
			lr.N -= m
		}
		if err != nil {
			return total, true, err
		}
		if w.left > 0 { // the file ended early: fasthttp reports the short body
			break
		}
	}
	return total, true, nil
}

// rawWriter is the state of the connection's raw writes (MSG_MORE and
// sendfile at an offset), kept on the connection so that a response
// allocates nothing for them.
type rawWriter struct {
	rc         syscall.RawConn
	moreFn     func(fd uintptr) bool
	sendfileFn func(fd uintptr) bool

	b   []byte // sendMore
	n   int
	src int // sendfile
	off int64
	// left is what sendfile still has to send of its chunk.
	left int64
	err  error
}

// raw returns the connection's raw writer, made at its first use; nil
// unless the connection is plain TCP.
func (c *conn) raw() *rawWriter {
	if c.rw != nil {
		return c.rw
	}
	tc, ok := c.Conn.(*net.TCPConn)
	if !ok {
		return nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	w := &rawWriter{rc: rc}
	w.moreFn, w.sendfileFn = w.sendMore, w.sendfile // bound once per connection
	c.rw = w
	return w
}

// canSendFile reports whether c sends a FileBody with sendfile: plain TCP.
func (c *conn) canSendFile() bool { return c.raw() != nil }

// writeMore writes b with MSG_MORE (see FileFollows) on a plain TCP
// connection, and as usual on any other.
func (c *conn) writeMore(b []byte) (int, error) {
	w := c.raw()
	if w == nil {
		return c.Conn.Write(b)
	}
	w.b, w.n, w.err = b, 0, nil
	err := w.rc.Write(w.moreFn)
	if err == nil {
		err = w.err
	}
	n := w.n
	w.b = nil
	return n, err
}

// sendMore and sendfile are called by RawConn.Write with the socket;
// false means "wait until it is writable and call again" (the
// connection's write deadline applies to that wait).
func (w *rawWriter) sendMore(fd uintptr) bool {
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

func (w *rawWriter) sendfile(fd uintptr) bool {
	for w.left > 0 {
		m, err := syscall.Sendfile(int(fd), w.src, &w.off, int(w.left)) // advances w.off, not the file's position
		if m > 0 {
			w.left -= int64(m)
		}
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return false
		case err != nil:
			w.err = &net.OpError{Op: "sendfile", Net: "tcp", Err: err}
			return true
		case m == 0:
			return true // end of file
		}
	}
	return true
}
