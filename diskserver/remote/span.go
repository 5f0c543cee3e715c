package remote

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"shoal"
)

var _ shoal.RangeOpener = (*Client)(nil)

// spanHTTP is the client of OpenRange: plain net/http, whose response body
// is a stream that can be read as slowly as the caller takes the data, and
// dropped (closing the connection) when the caller stops early. The
// fasthttp client of the other methods buffers whole bodies, which suits
// one-chunk range reads but not a span of a whole shard.
var spanHTTP = &http.Client{Transport: &http.Transport{
	DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
	MaxIdleConns:          256,
	MaxIdleConnsPerHost:   32,
	IdleConnTimeout:       90 * time.Second,
	ResponseHeaderTimeout: 30 * time.Second,
	DisableCompression:    true,
}}

// OpenRange implements shoal.RangeOpener with one streaming Range GET.
func (c *Client) OpenRange(ctx context.Context, id string, off, n int64) (io.ReadCloser, error) {
	const op = "remote.OpenRange"
	if !shoal.ValidObjectID(id) {
		return nil, shoal.Errorf(op, shoal.KindInvalid, "bad object id %q", id)
	}
	if off < 0 || n < 1 {
		return nil, shoal.Errorf(op, shoal.KindInvalid, "%s: bad span %d+%d", id, off, n)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url(http.MethodGet, id), nil)
	if err != nil {
		return nil, shoal.E(op, id, shoal.KindInvalid, err)
	}
	last := strconv.FormatInt(off+n-1, 10)
	req.Header.Set("Range", "bytes="+strconv.FormatInt(off, 10)+"-"+last)
	resp, err := spanClient(c.TLS).Do(req)
	if err != nil {
		return nil, transportErr(op, id, err)
	}
	if resp.StatusCode >= 400 {
		defer resp.Body.Close()
		reason, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return nil, httpStatusErr(op, id, resp.StatusCode, resp.Header.Get, reason)
	}
	// Exactly the bytes asked for, or nothing: a chunk read from the wrong
	// offset would fail its crc, but be reconstructed needlessly.
	want := "bytes " + strconv.FormatInt(off, 10) + "-" + last + "/"
	if resp.StatusCode != http.StatusPartialContent || resp.ContentLength != n || !strings.HasPrefix(resp.Header.Get("Content-Range"), want) {
		resp.Body.Close()
		return nil, shoal.Errorf(op, shoal.KindUnavailable, "%s: range %d+%d answered %d (%q, %d bytes)", id, off, n, resp.StatusCode, resp.Header.Get("Content-Range"), resp.ContentLength)
	}
	return resp.Body, nil
}
