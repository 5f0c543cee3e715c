package memcache

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"time"

	"shoal"
)

var replyStored = []byte("STORED\r\n")

// SetMulti is the write path of an invalidation (see cache.MultiSetter):
// the "set" commands of every key a server holds written in one go, then
// their replies read, in the caller's goroutine. A mutation's two to six
// generation keys cost one write and one read per server, where one Set
// per key cost a goroutine, a pooled connection and a round trip each
// (about a sixth of an md's CPU under concurrent creates). Keys are spread
// over the servers as Set spreads them. Like Set it ignores the breaker:
// invalidations are always attempted.
func (c *Cache) SetMulti(ctx context.Context, keys []string, vals [][]byte, ttl time.Duration) error {
	const op = "memcache.SetMulti"
	if len(vals) != len(keys) {
		return shoal.Errorf(op, shoal.KindInvalid, "%d values for %d keys", len(vals), len(keys))
	}
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	exp := strconv.Itoa(int((ttl + time.Second - 1) / time.Second))
	var srvOf [16]uint8
	srvs, err := c.serversOf(op, keys, srvOf[:0])
	if err != nil {
		return err
	}
	var connOf [4]*rawConn
	conns := connOf[:0]
	deadline := time.Now().Add(c.timeout)
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
		for i, k := range keys {
			if srvs == nil || int(srvs[i]) == s {
				rc.w.WriteString("set ")
				rc.w.WriteString(k)
				rc.w.WriteString(" 0 ")
				rc.w.WriteString(exp)
				rc.w.WriteByte(' ')
				rc.w.WriteString(strconv.Itoa(len(vals[i])))
				rc.w.WriteString("\r\n")
				rc.w.Write(vals[i])
				rc.w.WriteString("\r\n")
			}
		}
		if err = rc.w.Flush(); err != nil {
			break
		}
	}
	if err == nil {
		for s, rc := range conns {
			if rc != nil {
				if err = rc.readStored(srvs, s, len(keys)); err != nil {
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
	if err != nil {
		return c.fail(op, err)
	}
	c.breaker.success()
	return nil
}

// readStored reads the reply to each set sent to server s: STORED, or the
// error memcached gave (the connection is then not reused, as replies to
// the other sets may still be unread).
func (rc *rawConn) readStored(srvs []uint8, s, n int) error {
	for i := range n {
		if srvs != nil && int(srvs[i]) != s {
			continue
		}
		line, err := rc.r.ReadSlice('\n')
		if err != nil {
			return err
		}
		if !bytes.Equal(line, replyStored) {
			return fmt.Errorf("memcached: set: %q", bytes.TrimSpace(line))
		}
	}
	return nil
}
