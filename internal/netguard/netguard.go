// Package netguard protects a listener from clients that would exhaust a
// small machine: it caps connections in all and per client address
// (answering the surplus with a 503 and Retry-After, not by running out of
// file descriptors), and gives connections idle deadlines — a streamed
// body or a response write that makes no progress for a while is cut,
// however long the whole transfer takes. The header timeout and the
// keep-alive idle timeout are fasthttp's (ReadTimeout, IdleTimeout); this
// package adds what fasthttp only offers as wall-clock limits.
//
// It imports nothing of shoal's: servers (md, diskserver, gw) wrap their
// listeners with it, and md wraps the connections of its client to data
// servers (Dialer).
package netguard

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// Limits of one listener. Zero values mean no limit.
type Limits struct {
	MaxConns      int           // open connections in all
	MaxConnsPerIP int           // open connections from one client address
	ReadIdle      time.Duration // a streamed request body (see BodyIdle) that sends nothing for this long is cut
	WriteIdle     time.Duration // a write that cannot progress for this long is cut
}

// Listener is a net.Listener whose connections obey Limits.
type Listener struct {
	net.Listener
	lim Limits

	mu    sync.Mutex
	total int
	perIP map[string]int

	refused atomic.Int64
}

// Listen wraps ln.
func Listen(ln net.Listener, lim Limits) *Listener {
	return &Listener{Listener: ln, lim: lim, perIP: map[string]int{}}
}

// Refused reports how many connections were turned away by the caps.
func (l *Listener) Refused() int64 { return l.refused.Load() }

// rejection is what a connection beyond a cap is told before it is closed.
const rejection = "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 5\r\nX-Shoal-Kind: unavailable\r\n" +
	"Content-Type: text/plain; charset=utf-8\r\nContent-Length: 34\r\nConnection: close\r\n\r\n" +
	"unavailable: too many connections\n"

// Accept returns the next connection within the caps; connections beyond
// them are answered 503 and closed in the background.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ip := hostOf(c.RemoteAddr())
		if !l.admit(ip) {
			l.refused.Add(1)
			go refuse(c)
			continue
		}
		return wrap(c, l.lim, func() { l.release(ip) }), nil
	}
}

func (l *Listener) admit(ip string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lim.MaxConns > 0 && l.total >= l.lim.MaxConns || l.lim.MaxConnsPerIP > 0 && l.perIP[ip] >= l.lim.MaxConnsPerIP {
		return false
	}
	l.total++
	l.perIP[ip]++
	return true
}

func (l *Listener) release(ip string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total--
	if l.perIP[ip]--; l.perIP[ip] <= 0 {
		delete(l.perIP, ip)
	}
}

// refuse tells c it is beyond a cap and closes it gently, within a
// second (at most 64 KiB of its request read and dropped).
func refuse(c net.Conn) {
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := io.WriteString(c, rejection); err == nil {
		closeWriteAndDrain(c, 64<<10)
	}
	c.Close()
}

// closeWriteAndDrain closes c's write side, then reads and drops what the
// client sends until it closes too (at most max bytes, within c's
// deadline). Closed at once, a socket with bytes of the client's request
// unread answers them with a reset, which can destroy the answer before
// the client has read it, or fail the client's next send before it looks
// for an answer (curl then reports "Send failure: Connection reset").
func closeWriteAndDrain(c net.Conn, max int64) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok && cw.CloseWrite() == nil {
		io.Copy(io.Discard, io.LimitReader(c, max))
	}
}

// Linger makes the close of c (a connection from a Listener, or the TLS
// connection over one) gentle: its answer sent, its write side is closed
// and what the client still sends is read and dropped, for up to
// LingerTime and LingerMax bytes, before it is closed. A handler calls
// it when it answers without reading the whole request body (a body over
// its limit) and closes the connection: the client, still sending, then
// gets the answer.
func Linger(c net.Conn) {
	if g := guarded(c); g != nil {
		g.linger.Store(true)
	}
}

// LingerTime and LingerMax bound a gentle close (Linger): a client that
// reads the answer stops sending and closes within a round trip.
const (
	LingerTime = 2 * time.Second
	LingerMax  = 64 << 20
)

func hostOf(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok {
		return string(ta.IP.To16())
	}
	h, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return h
}

// Dialer wraps the connections a client opens (md's client to data
// servers) with idle deadlines on both directions, so that a transfer
// through md lasts as long as it makes progress.
func Dialer(dial func(addr string) (net.Conn, error), idle time.Duration) func(string) (net.Conn, error) {
	return func(addr string) (net.Conn, error) {
		c, err := dial(addr)
		if err != nil {
			return nil, err
		}
		gc := wrap(c, Limits{ReadIdle: idle, WriteIdle: idle}, nil)
		guarded(gc).dialed = idle > 0
		BodyIdle(gc)
		return gc, nil
	}
}

// wrap returns c with the deadlines of lim; a *tls.Conn keeps its TLS
// methods, so that fasthttp still sees the request as TLS.
func wrap(c net.Conn, lim Limits, release func()) net.Conn {
	g := &conn{Conn: c, lim: lim, release: release}
	if tc, ok := c.(*tls.Conn); ok {
		return &tlsConn{conn: g, tc: tc}
	}
	return g
}

// conn enforces the idle deadlines.
type conn struct {
	net.Conn
	lim      Limits
	idleRead atomic.Bool // BodyIdle called and no SetReadDeadline since
	// dialed: a client's connection (Dialer), idle for good. fasthttp's
	// client clears the read deadline (sets the zero time) before it
	// reads each answer, which would end idle mode: a data server that
	// stopped answering then held md's request for ever.
	dialed  bool
	linger  atomic.Bool // Linger called: Close is gentle
	release func()
	once    sync.Once

	// moreBelow, set by FileFollows: the next write shorter than this is
	// a header that a sendfile follows. The connection's own goroutine
	// sets and reads it (fasthttp serves a connection from one
	// goroutine), so it needs no lock.
	moreBelow int64
	rw        *rawWriter // raw writes' state, made at first use (sendfile_linux.go)
}

// HeaderReceived is the fasthttp.Server hook of servers that stream
// request bodies: fasthttp reads the first bytes of a body (up to 8 KiB)
// before calling the handler, under the header timeout; a request with a
// body gets readIdle from the end of its headers for them instead. The
// handler then calls BodyIdle.
func HeaderReceived(readIdle time.Duration) func(*fasthttp.RequestHeader) fasthttp.RequestConfig {
	return func(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
		if readIdle > 0 && h.ContentLength() != 0 {
			return fasthttp.RequestConfig{ReadTimeout: readIdle}
		}
		return fasthttp.RequestConfig{}
	}
}

// BodyIdle switches c (a connection from a Listener, or the TLS connection
// over one) to idle reads: each read must return within ReadIdle, until
// the server sets a deadline itself (for the next request). A handler
// calls it before streaming a request body.
func BodyIdle(c net.Conn) {
	g := guarded(c)
	if g == nil || g.lim.ReadIdle <= 0 {
		return
	}
	g.idleRead.Store(true)
	g.Conn.SetReadDeadline(time.Now().Add(g.lim.ReadIdle))
}

// guarded is c's conn, if it came from a Listener; else nil.
func guarded(c net.Conn) *conn {
	switch v := c.(type) {
	case *conn:
		return v
	case *tlsConn:
		return v.conn
	}
	return nil
}

// Read gives each read, in idle mode, ReadIdle to return something: set
// before the read (not after the last one), so that a connection that
// wrote for a long time — md sending a big upload to a data server — may
// still wait for its answer.
func (c *conn) Read(b []byte) (int, error) {
	if c.idleRead.Load() {
		c.Conn.SetReadDeadline(time.Now().Add(c.lim.ReadIdle))
	}
	return c.Conn.Read(b)
}

// SetReadDeadline ends idle mode, but on a dialed connection only while
// t is not the zero time (no deadline means the idle one there).
func (c *conn) SetReadDeadline(t time.Time) error {
	c.idleRead.Store(c.dialed && t.IsZero())
	return c.Conn.SetReadDeadline(t)
}

func (c *conn) SetDeadline(t time.Time) error {
	c.idleRead.Store(c.dialed && t.IsZero())
	return c.Conn.SetDeadline(t)
}

func (c *conn) Write(b []byte) (int, error) {
	if c.moreBelow > 0 && c.takeMore(b) {
		if c.lim.WriteIdle > 0 {
			c.Conn.SetWriteDeadline(time.Now().Add(c.lim.WriteIdle))
		}
		return c.writeMore(b) // a header: shorter than one chunk
	}
	if c.lim.WriteIdle <= 0 {
		return c.Conn.Write(b)
	}
	written := 0
	for written < len(b) {
		// Bounded chunks: a slow reader must move a chunk within WriteIdle.
		end := min(len(b), written+writeChunk)
		c.Conn.SetWriteDeadline(time.Now().Add(c.lim.WriteIdle))
		n, err := c.Conn.Write(b[written:end])
		written += n
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

// writeChunk is the most one write deadline covers.
const writeChunk = 256 << 10

// ReadFrom keeps net.TCPConn's sendfile path (a whole file, or an
// io.LimitedReader of one, as fasthttp sends a Range) while renewing the
// write deadline between chunks.
func (c *conn) ReadFrom(r io.Reader) (int64, error) {
	c.moreBelow = 0
	if n, handled, err := c.sendBody(r); handled {
		return n, err
	}
	rf, ok := c.Conn.(io.ReaderFrom)
	if !ok || c.lim.WriteIdle <= 0 {
		if ok {
			return rf.ReadFrom(r)
		}
		return io.Copy(struct{ io.Writer }{c}, r)
	}
	src, limit := r, int64(-1)
	if lr, ok := r.(*io.LimitedReader); ok {
		src, limit = lr.R, lr.N
		defer func() { lr.N = limit }()
	}
	if _, isFile := src.(*os.File); !isFile {
		// Not sendfile: a plain copy, each write under its own deadline
		// (a deadline set per chunk would also run while the source is
		// slow to give the bytes, e.g. an upload md relays).
		if limit >= 0 {
			r = &io.LimitedReader{R: src, N: limit}
		}
		n, err := io.Copy(struct{ io.Writer }{c}, r)
		if limit >= 0 {
			limit -= n
		}
		return n, err
	}
	var total int64
	for limit != 0 {
		n := int64(sendChunk)
		if limit > 0 {
			n = min(n, limit)
		}
		c.Conn.SetWriteDeadline(time.Now().Add(c.lim.WriteIdle))
		m, err := rf.ReadFrom(&io.LimitedReader{R: src, N: n})
		total += m
		if limit > 0 {
			limit -= m
		}
		if err != nil || m < n {
			return total, err
		}
	}
	return total, nil
}

// sendChunk is what one sendfile call with one write deadline may move.
const sendChunk = 4 << 20

func (c *conn) Close() error {
	if c.linger.CompareAndSwap(true, false) {
		c.Conn.SetDeadline(time.Now().Add(LingerTime))
		closeWriteAndDrain(c.Conn, LingerMax)
	}
	c.once.Do(func() {
		if c.release != nil {
			c.release()
		}
	})
	return c.Conn.Close()
}

// tlsConn is conn over a *tls.Conn, with the methods fasthttp uses to tell
// a TLS request (RequestCtx.IsTLS, TLSConnectionState).
type tlsConn struct {
	*conn
	tc       *tls.Conn
	answered bool // plainHTTP answered: the handshake's error repeats on every later call
}

func (c *tlsConn) ConnectionState() tls.ConnectionState { return c.tc.ConnectionState() }

func (c *tlsConn) Handshake() error { return c.plainHTTP(c.tc.Handshake()) }

func (c *tlsConn) Read(b []byte) (int, error) {
	n, err := c.conn.Read(b)
	return n, c.plainHTTP(err)
}

// plainHTTP answers, as net/http does, a client that sent plain HTTP to a
// TLS port with a 400 saying so (curl showed only "Empty reply from
// server"), once, and passes err on. The connection goroutine alone
// calls it.
func (c *tlsConn) plainHTTP(err error) error {
	var re tls.RecordHeaderError
	if !c.answered && errors.As(err, &re) && re.Conn != nil && looksLikeHTTP(re.RecordHeader[:]) {
		c.answered = true
		re.Conn.SetWriteDeadline(time.Now().Add(time.Second))
		io.WriteString(re.Conn, "HTTP/1.0 400 Bad Request\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nthis port serves https: send the request over TLS (an https:// URL)\n")
	}
	return err
}

// looksLikeHTTP reports whether the five bytes a TLS record header should
// be open an HTTP request.
func looksLikeHTTP(h []byte) bool {
	for _, m := range []string{"GET /", "HEAD ", "POST ", "PUT /", "OPTIO", "DELET", "PROPF", "MKCOL", "COPY ", "MOVE ", "PROPP", "LOCK ", "UNLOC", "PATCH"} {
		if string(h) == m {
			return true
		}
	}
	return false
}

// Config is what a shoal server applies to its listener and its fasthttp
// server.
type Config struct {
	ReadHeader     time.Duration // a request's headers (and fasthttp's buffered bodies) must arrive within this
	Idle           time.Duration // a keep-alive connection with no request for this long is closed
	MaxHeaderBytes int           // the request line and headers must fit in this (fasthttp's read buffer); 0: fasthttp's 4 KiB
	Limits
}

// Defaults suit a Raspberry Pi as well as a server: a slow client gets 20 s
// for its headers and a minute of silence mid-transfer; 2,048 connections
// in all, 512 from one address (md proxying for many clients is one
// address to a data server).
func Defaults() Config {
	return Config{ReadHeader: 20 * time.Second, Idle: 60 * time.Second, MaxHeaderBytes: 16 << 10,
		Limits: Limits{MaxConns: 2048, MaxConnsPerIP: 512, ReadIdle: time.Minute, WriteIdle: time.Minute}}
}

// OrDefaults is c, or Defaults if c is the zero Config.
func (c Config) OrDefaults() Config {
	if c == (Config{}) {
		return Defaults()
	}
	return c
}

// Apply sets s's timeouts: the header timeout and keep-alive idle timeout
// (fasthttp's), no wall-clock limit on writing a response (the listener's
// write-idle deadline bounds a stalled client instead), and the body-start
// hook (HeaderReceived).
func (c Config) Apply(s *fasthttp.Server) {
	s.ReadTimeout, s.IdleTimeout, s.WriteTimeout = c.ReadHeader, c.Idle, 0
	if c.MaxHeaderBytes > 0 {
		s.ReadBufferSize = c.MaxHeaderBytes
	}
	s.HeaderReceived = HeaderReceived(c.ReadIdle)
}
