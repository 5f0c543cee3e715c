//go:build !linux

package netguard

// moreWriter is Linux's MSG_MORE writer (more_linux.go); elsewhere a
// header is written as usual.
type moreWriter struct{}

func (c *conn) writeMore(b []byte) (int, error) { return c.Conn.Write(b) }
