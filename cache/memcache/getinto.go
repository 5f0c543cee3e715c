package memcache

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/bradfitz/gomemcache/memcache"

	"shoal"
)

// GetInto is the read path of an L2 hit (see cache.IntoGetter): one
// "get k1 k2 …" per memcached server holding some of the keys, all
// written before any reply is read, in the caller's goroutine. It costs
// one round trip of latency like gomemcache's GetMulti, without its
// goroutine, channel, map and Item per key (which made a multi-get of
// four keys cost ~30% more than a single Get). Keys are spread over the
// servers exactly as gomemcache spreads Set (its ServerList), so values
// written by Set are found here.
//
// vals[i] receives the value of keys[i], or nil when it is missing; the
// values share one buffer and must not be modified.
func (c *Cache) GetInto(ctx context.Context, keys []string, vals [][]byte) error {
	const op = "memcache.GetInto"
	if len(vals) < len(keys) {
		return shoal.Errorf(op, shoal.KindInvalid, "%d values for %d keys", len(vals), len(keys))
	}
	if !c.breaker.allow() {
		return shoal.E(op, shoal.KindUnavailable, errOpen)
	}
	var srvOf [16]uint8 // server index of each key (first 16 keys; more are rare)
	srvs, err := c.serversOf(op, keys, srvOf[:0])
	if err != nil {
		return err
	}
	for i := range keys {
		vals[i] = nil
	}
	buf := make([]byte, 0, 512)
	var offs [16][2]int32
	spans := offs[:0]
	err = c.roundTrip(srvs, func(w *bufio.Writer, s int) {
		w.WriteString("get")
		for i, k := range keys {
			if srvs == nil || int(srvs[i]) == s {
				w.WriteByte(' ')
				w.WriteString(k)
			}
		}
		w.WriteString("\r\n")
	}, func(rc *rawConn, s int) (err error) {
		buf, spans, err = rc.readValues(keys, srvs, s, buf, spans)
		return err
	})
	if err != nil {
		return c.fail(op, err)
	}
	c.breaker.success()
	for i := range keys {
		if i < len(spans) && spans[i][0] >= 0 {
			vals[i] = buf[spans[i][0]:spans[i][1]:spans[i][1]]
		}
	}
	return nil
}

// serversOf checks keys and returns the index of the server holding each
// (appended to buf), or nil when there is one server.
func (c *Cache) serversOf(op string, keys []string, buf []uint8) ([]uint8, error) {
	var srvs []uint8
	if len(c.raw) > 1 {
		srvs = buf
	}
	for _, k := range keys {
		if !legalKey(k) {
			return nil, shoal.E(op, shoal.KindInvalid, memcache.ErrMalformedKey)
		}
		if len(c.raw) > 1 {
			addr, err := c.servers.PickServer(k)
			if err != nil {
				return nil, c.fail(op, err)
			}
			srvs = append(srvs, uint8(c.serverIndex(addr)))
		}
	}
	return srvs, nil
}

// roundTrip writes, on one pooled connection to each server involved
// (srvs: each key's server, nil for one server), what send writes for
// that server, then reads each server's reply with recv, all in the
// caller's goroutine: one round trip of latency however many servers. A
// connection goes back to its pool only if its reply was read in full: one
// with unread bytes would answer the next request with this one's reply.
func (c *Cache) roundTrip(srvs []uint8, send func(w *bufio.Writer, s int), recv func(rc *rawConn, s int) error) error {
	var connOf [4]*rawConn
	conns := connOf[:0]
	deadline := time.Now().Add(c.timeout)
	var err error
	for s, p := range c.raw {
		if !involved(srvs, s) {
			conns = append(conns, nil)
			continue
		}
		rc, derr := p.get(deadline)
		conns = append(conns, rc)
		if derr != nil {
			err = derr
			break
		}
		send(rc.w, s)
		if err = rc.w.Flush(); err != nil {
			break
		}
	}
	if err == nil {
		for s, rc := range conns {
			if rc != nil {
				if err = recv(rc, s); err != nil {
					break
				}
			}
		}
	}
	for s, rc := range conns {
		if rc != nil {
			c.raw[s].put(rc, err == nil)
		}
	}
	return err
}

func involved(srvs []uint8, s int) bool {
	if srvs == nil {
		return s == 0
	}
	for _, v := range srvs {
		if int(v) == s {
			return true
		}
	}
	return false
}

func (c *Cache) serverIndex(addr net.Addr) int {
	for i, p := range c.raw {
		if p.addr == addr || p.addr.String() == addr.String() {
			return i
		}
	}
	return 0
}

// legalKey is memcached's rule: at most 250 bytes, no spaces or control
// characters.
func legalKey(k string) bool {
	if len(k) == 0 || len(k) > 250 {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] <= ' ' || k[i] == 0x7f {
			return false
		}
	}
	return true
}

// rawPool keeps idle text-protocol connections to one memcached server.
type rawPool struct {
	addr    net.Addr
	maxIdle int
	mu      sync.Mutex
	idle    []*rawConn
}

type rawConn struct {
	nc net.Conn
	r  *bufio.Reader
	w  *bufio.Writer
}

// get returns an idle connection or dials one, with the deadline set.
func (p *rawPool) get(deadline time.Time) (*rawConn, error) {
	p.mu.Lock()
	var rc *rawConn
	if n := len(p.idle); n > 0 {
		rc = p.idle[n-1]
		p.idle = p.idle[:n-1]
	}
	p.mu.Unlock()
	if rc == nil {
		d := net.Dialer{Deadline: deadline}
		nc, err := d.Dial(p.addr.Network(), p.addr.String())
		if err != nil {
			return nil, err
		}
		rc = &rawConn{nc: nc, r: bufio.NewReaderSize(nc, 4096), w: bufio.NewWriterSize(nc, 1024)}
	}
	if err := rc.nc.SetDeadline(deadline); err != nil {
		rc.nc.Close()
		return nil, err
	}
	return rc, nil
}

// put keeps rc for reuse when ok (its reply was read in full), else
// closes it: a connection with unread bytes would answer the next request
// with this one's reply.
func (p *rawPool) put(rc *rawConn, ok bool) {
	if ok {
		p.mu.Lock()
		if len(p.idle) < p.maxIdle {
			p.idle = append(p.idle, rc)
			rc = nil
		}
		p.mu.Unlock()
	}
	if rc != nil {
		rc.nc.Close()
	}
}

func (p *rawPool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, rc := range p.idle {
		rc.nc.Close()
	}
	p.idle = nil
}

var (
	crlf      = []byte("\r\n")
	replyEnd  = []byte("END\r\n")
	replyItem = []byte("VALUE ")
)

// readValues reads one get reply (VALUE lines, then END) from server s,
// appending each value to buf and recording its span at the index of its
// key. spans grows to len(keys) with -1 for keys not (yet) found.
func (rc *rawConn) readValues(keys []string, srvs []uint8, s int, buf []byte, spans [][2]int32) ([]byte, [][2]int32, error) {
	for len(spans) < len(keys) {
		spans = append(spans, [2]int32{-1, -1})
	}
	for {
		line, err := rc.r.ReadSlice('\n')
		if err != nil {
			return buf, spans, err
		}
		if bytes.Equal(line, replyEnd) {
			return buf, spans, nil
		}
		rest, ok := bytes.CutPrefix(line, replyItem)
		if !ok {
			return buf, spans, fmt.Errorf("memcached: unexpected reply %q", bytes.TrimSpace(line))
		}
		// VALUE <key> <flags> <bytes> [<cas>]
		fields := bytes.Fields(rest)
		if len(fields) < 3 {
			return buf, spans, fmt.Errorf("memcached: bad VALUE line %q", bytes.TrimSpace(line))
		}
		n, err := strconv.Atoi(string(fields[2]))
		if err != nil || n < 0 {
			return buf, spans, fmt.Errorf("memcached: bad VALUE line %q", bytes.TrimSpace(line))
		}
		idx := -1
		for i, k := range keys {
			if (srvs == nil || int(srvs[i]) == s) && string(fields[0]) == k {
				idx = i
				break
			}
		}
		start := len(buf)
		buf = append(buf, make([]byte, n+2)...)
		if _, err := readFull(rc.r, buf[start:]); err != nil {
			return buf, spans, err
		}
		if !bytes.Equal(buf[start+n:], crlf) {
			return buf, spans, errors.New("memcached: value not followed by CRLF")
		}
		buf = buf[:start+n]
		if idx >= 0 {
			spans[idx] = [2]int32{int32(start), int32(start + n)}
		}
	}
}

func readFull(r *bufio.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := r.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
