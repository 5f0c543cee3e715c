package memcache

import (
	"bufio"
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
	err = c.roundTrip(srvs, func(w *bufio.Writer, s int) {
		for i, k := range keys {
			if srvs == nil || int(srvs[i]) == s {
				w.WriteString("set ")
				w.WriteString(k)
				w.WriteString(" 0 ")
				w.WriteString(exp)
				w.WriteByte(' ')
				w.WriteString(strconv.Itoa(len(vals[i])))
				w.WriteString("\r\n")
				w.Write(vals[i])
				w.WriteString("\r\n")
			}
		}
	}, func(rc *rawConn, s int) error {
		return rc.readStored(srvs, s, len(keys))
	})
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
