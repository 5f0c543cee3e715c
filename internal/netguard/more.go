package netguard

import "net"

// A response whose body is sent from a file goes out as two writes: the
// header, flushed by fasthttp, then the body with sendfile(2). On a
// connection with TCP_NODELAY (Go's default) each leaves at once, so the
// client gets the header in a segment of its own and wakes twice per
// response; over loopback the server also pays the whole receive path of
// that extra segment. MSG_MORE on the header's write holds it in the
// socket until the sendfile that follows, and header and body leave
// together, without the syscalls TCP_CORK would add (one to set, one to
// clear).

// FileFollows tells c, a connection from a Listener, that the response
// being answered has a body of n bytes that will be sent from a file. The
// next write on c shorter than n bytes (the header, flushed ahead of the
// sendfile) is then sent with MSG_MORE; a write of n bytes or more holds
// the whole body and is sent as usual. The mark is used by the next write
// or sendfile, whichever comes first. Call it only when the body really
// is that file: should nothing follow the held header, the kernel sends
// it on its own only after about 200 ms. Other connections (TLS, which
// never sends a file, or one not from a Listener) ignore it.
//
// It reports whether the caller should have the header flushed on its
// own (fasthttp's Response.ImmediateHeaderFlush): when c sends a FileBody
// with sendfile and the body is larger than fasthttp's write buffer.
// Else fasthttp first fills the rest of that buffer behind the header
// with a pread of the body, which cost a 64 KiB GET a twentieth of its
// CPU, before it hands the remainder to sendfile. A smaller body is
// better read behind the header: both leave in one write, where a header
// flushed alone ahead of a body shorter than itself would leave in a
// segment of its own.
func FileFollows(c net.Conn, n int64) bool {
	g, ok := c.(*conn)
	if !ok || n <= 0 {
		return false
	}
	g.moreBelow = n
	return n > writeBufferSize && g.canSendFile()
}

// writeBufferSize is fasthttp's default write buffer, which shoal's
// servers keep.
const writeBufferSize = 4096

// takeMore reports whether a write of b is a header that a file's bytes
// follow, and clears the mark.
func (c *conn) takeMore(b []byte) bool {
	m := c.moreBelow
	c.moreBelow = 0
	return m > 0 && int64(len(b)) < m && len(b) <= writeChunk
}
