package bench

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"io"
	"net"
	"time"

	"shoal"
)

// conn is one keep-alive HTTP/1.1 connection speaking just what a load
// generator needs: it writes a request head (and body) the caller built
// and reads the response, counting and discarding its body (Content-Length,
// chunked, or up to EOF). No per-request allocation, no per-request
// deadline timer (the deadline is pushed forward only every timeout/2),
// one write syscall for small requests. It replaced fasthttp's HostClient
// here because the generator must cost less CPU per request than the
// servers it measures on the same box (see README: against wrk).
type conn struct {
	addr    string // host:port to dial
	tls     *tls.Config
	timeout time.Duration

	c        net.Conn
	io       io.ReadWriter // c, or raw system calls on it (rawio_linux.go)
	br       *bufio.Reader
	wbuf     []byte
	deadline time.Time
}

const connBufSize = 64 << 10

// newConn prepares a connection to addr, over TLS when useTLS with a copy
// of base (nil: the system roots) naming addr's host.
func newConn(addr string, useTLS bool, base *tls.Config, timeout time.Duration) *conn {
	c := &conn{addr: addr, timeout: timeout, wbuf: make([]byte, 0, connBufSize)}
	if useTLS {
		host, _, _ := net.SplitHostPort(addr)
		c.tls = &tls.Config{}
		if base != nil {
			c.tls = base.Clone()
		}
		if c.tls.ServerName == "" {
			c.tls.ServerName = host
		}
	}
	return c
}

func (c *conn) close() {
	if c.c != nil {
		c.c.Close()
		c.c = nil
	}
}

func (c *conn) dial() error {
	nc, err := net.DialTimeout("tcp", c.addr, c.timeout)
	if err != nil {
		return err
	}
	if c.tls != nil {
		tc := tls.Client(nc, c.tls)
		tc.SetDeadline(time.Now().Add(c.timeout))
		if err := tc.Handshake(); err != nil {
			nc.Close()
			return err
		}
		nc = tc
	}
	c.c = nc
	c.io = newRawIO(nc)
	if c.br == nil {
		c.br = bufio.NewReaderSize(c.io, connBufSize)
	} else {
		c.br.Reset(c.io)
	}
	c.deadline = time.Time{}
	return nil
}

// roundTrip sends head (a complete request head, CRLF CRLF included) and
// then body or bodyLen bytes of stream, and reads the response. A
// Location header is appended to *loc. It returns the status and the body
// bytes received.
func (c *conn) roundTrip(head, body []byte, stream io.Reader, bodyLen int64, isHead bool, loc *[]byte) (status int, n int64, err error) {
	if c.c == nil {
		if err = c.dial(); err != nil {
			return 0, 0, err
		}
	}
	if c.timeout > 0 {
		if now := time.Now(); c.deadline.Sub(now) < c.timeout/2 {
			c.deadline = now.Add(c.timeout)
			c.c.SetDeadline(c.deadline)
		}
	}
	if err = c.write(head, body, stream, bodyLen); err == nil {
		status, n, err = c.read(isHead, loc)
	}
	if err != nil {
		c.close()
	}
	return status, n, err
}

func (c *conn) write(head, body []byte, stream io.Reader, bodyLen int64) error {
	if stream == nil && len(head)+len(body) <= cap(c.wbuf) {
		c.wbuf = append(append(c.wbuf[:0], head...), body...)
		_, err := c.io.Write(c.wbuf)
		return err
	}
	if _, err := c.io.Write(head); err != nil {
		return err
	}
	if stream == nil {
		_, err := c.io.Write(body)
		return err
	}
	buf := c.wbuf[:cap(c.wbuf)]
	for sent := int64(0); sent < bodyLen; {
		k, err := stream.Read(buf)
		if k > 0 {
			if _, werr := c.io.Write(buf[:k]); werr != nil {
				return werr
			}
			sent += int64(k)
		}
		if err == io.EOF {
			if sent < bodyLen {
				return io.ErrUnexpectedEOF
			}
			break
		}
		if err != nil {
			return err
		}
	}
	return nil
}

var errBadResponse = shoal.Errorf("bench", shoal.KindInvalid, "malformed HTTP response")

// read reads one final response (skipping 1xx), discarding its body.
func (c *conn) read(isHead bool, loc *[]byte) (status int, n int64, err error) {
	for {
		var closeAfter, chunked bool
		length := int64(-1)
		line, err := c.br.ReadSlice('\n')
		if err != nil {
			return 0, 0, err
		}
		if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
			return 0, 0, errBadResponse
		}
		closeAfter = line[7] == '0'
		status = int(line[9]-'0')*100 + int(line[10]-'0')*10 + int(line[11]-'0')
		if status < 100 || status > 999 {
			return 0, 0, errBadResponse
		}
		for {
			line, err = c.br.ReadSlice('\n')
			if err != nil {
				return 0, 0, err
			}
			if len(line) <= 2 {
				break
			}
			colon := bytes.IndexByte(line, ':')
			if colon <= 0 {
				return 0, 0, errBadResponse
			}
			key, val := line[:colon], bytes.TrimSpace(line[colon+1:])
			switch {
			case bytes.EqualFold(key, []byte("Content-Length")):
				if length, err = parseUint(val); err != nil {
					return 0, 0, err
				}
			case bytes.EqualFold(key, []byte("Transfer-Encoding")):
				chunked = bytes.EqualFold(val, []byte("chunked"))
			case bytes.EqualFold(key, []byte("Connection")):
				closeAfter = bytes.EqualFold(val, []byte("close"))
			case bytes.EqualFold(key, []byte("Location")):
				if loc != nil {
					*loc = append((*loc)[:0], val...)
				}
			}
		}
		if status >= 100 && status < 200 {
			continue // 100 Continue and friends precede the real answer
		}
		switch {
		case isHead || status == 204 || status == 304:
		case chunked:
			n, err = c.readChunked()
		case length >= 0:
			n, err = discard(c.br, length)
		default:
			n, err = c.br.WriteTo(io.Discard)
			closeAfter = true
		}
		if err == nil && closeAfter {
			c.close()
		}
		return status, n, err
	}
}

func (c *conn) readChunked() (int64, error) {
	var n int64
	for {
		line, err := c.br.ReadSlice('\n')
		if err != nil {
			return n, err
		}
		size, ok := int64(0), false
		for _, b := range line {
			var d byte
			switch {
			case '0' <= b && b <= '9':
				d = b - '0'
			case 'a' <= b && b <= 'f':
				d = b - 'a' + 10
			case 'A' <= b && b <= 'F':
				d = b - 'A' + 10
			default:
				goto done
			}
			size, ok = size<<4|int64(d), true
		}
	done:
		if !ok || size < 0 {
			return n, errBadResponse
		}
		if size == 0 {
			for { // trailers, up to the empty line
				line, err = c.br.ReadSlice('\n')
				if err != nil {
					return n, err
				}
				if len(line) <= 2 {
					return n, nil
				}
			}
		}
		k, err := discard(c.br, size)
		n += k
		if err != nil {
			return n, err
		}
		if line, err = c.br.ReadSlice('\n'); err != nil || len(line) > 2 {
			return n, errBadResponse
		}
	}
}

// discardChunk is the most one bufio Discard skips: its count is an int,
// which on 32-bit ARM cannot hold a body of 2 GiB or more (a 4 GiB + 100 B
// body was read as 100 bytes). A variable for the test.
var discardChunk int64 = 1 << 30

// discard skips n bytes of br.
func discard(br *bufio.Reader, n int64) (int64, error) {
	var done int64
	for done < n {
		k, err := br.Discard(int(min(n-done, discardChunk)))
		done += int64(k)
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

func parseUint(b []byte) (int64, error) {
	if len(b) == 0 || len(b) > 18 {
		return 0, errBadResponse
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, errBadResponse
		}
		v = v*10 + int64(c-'0')
	}
	return v, nil
}
