package gw

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"shoal"
	"shoal/diskserver/remote"
)

// spanHTTP is the client of the shard streams: plain net/http, whose
// response body is a stream that can be read as slowly as the gw's client
// takes the data, and dropped (closing the connection) when the GET ends
// early. remote.Client's fasthttp client buffers whole bodies, which suits
// its one-chunk range reads but not a span of a whole shard.
var spanHTTP = &http.Client{Transport: &http.Transport{
	DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
	MaxIdleConns:          256,
	MaxIdleConnsPerHost:   32,
	IdleConnTimeout:       90 * time.Second,
	ResponseHeaderTimeout: 30 * time.Second,
	DisableCompression:    true,
}}

// openSpan returns a reader of the n bytes at off of shard i's object: one
// streaming Range GET on a remote data server, plain reads at offsets on
// any other store. Closing it ends the GET.
func (o *object) openSpan(ctx context.Context, i int, off, n int64) (io.ReadCloser, error) {
	// The head read at open holds the start of the span when it is the
	// first stripe's chunk.
	if h, ok := o.objs[i].(*headObject); ok && off < int64(len(h.head)) {
		prefix := h.head[off:min(off+n, int64(len(h.head)))]
		if int64(len(prefix)) == n {
			return io.NopCloser(bytes.NewReader(prefix)), nil
		}
		rest, err := o.openSpan(ctx, i, off+int64(len(prefix)), n-int64(len(prefix)))
		if err != nil {
			return nil, err
		}
		return struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(prefix), rest), rest}, nil
	}
	c, ok := o.s.shards[i].(*remote.Client)
	if !ok {
		return io.NopCloser(io.NewSectionReader(o.objs[i], off, n)), nil
	}
	const op = "gw.stream"
	ttl := c.URLTTL
	if ttl <= 0 {
		ttl = remote.DefaultURLTTL
	}
	url := c.Keys.URL(c.Base, http.MethodGet, o.id, "", time.Now().Add(ttl))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, shoal.E(op, o.id, shoal.KindInvalid, err)
	}
	req.Header.Set("Range", "bytes="+strconv.FormatInt(off, 10)+"-"+strconv.FormatInt(off+n-1, 10))
	resp, err := spanHTTP.Do(req)
	if err != nil {
		return nil, shoal.E(op, o.id, shoal.KindUnavailable, err)
	}
	// Exactly the bytes asked for, or nothing: a chunk read from the wrong
	// offset would fail its crc, but be reconstructed needlessly.
	want := "bytes " + strconv.FormatInt(off, 10) + "-" + strconv.FormatInt(off+n-1, 10) + "/"
	if resp.StatusCode != http.StatusPartialContent || resp.ContentLength != n || !strings.HasPrefix(resp.Header.Get("Content-Range"), want) {
		resp.Body.Close()
		return nil, shoal.Errorf(op, shoal.KindUnavailable, "%s: range %d+%d answered %d (%q, %d bytes)", o.id, off, n, resp.StatusCode, resp.Header.Get("Content-Range"), resp.ContentLength)
	}
	return resp.Body, nil
}
