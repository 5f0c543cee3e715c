package netguard

import (
	"crypto/tls"
	"net"
)

// PeerClosed reports whether the client of c has closed its end: a
// server streaming a long answer (a third-party copy's markers) learns
// that its client hung up without waiting for a write to fail. It looks
// without reading (a pipelined request stays where it is); over TLS, or
// where it cannot tell, it says false and the next failed write tells.
func PeerClosed(c net.Conn) bool {
	for range 8 {
		switch v := c.(type) {
		case *conn:
			c = v.Conn
		case *tlsConn:
			c = v.tc.NetConn()
		case *tls.Conn:
			return false // a close_notify would be unread data
		default:
			return peerClosed(c)
		}
	}
	return false
}
