//go:build !linux

package netguard

import "io"

// rawWriter is Linux's (sendfile_linux.go): elsewhere a header is written
// as usual and a FileBody is copied through its Read.
type rawWriter struct{}

func (c *conn) writeMore(b []byte) (int, error) { return c.Conn.Write(b) }

func (c *conn) canSendFile() bool { return false }

func (c *conn) sendBody(io.Reader) (int64, bool, error) { return 0, false, nil }
