package remote

import (
	"context"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"shoal"
)

var _ shoal.HeadOpener = (*Client)(nil)

// OpenHead implements shoal.HeadOpener with one Range GET of the first
// len(head) bytes, whose Content-Range gives the object's size.
func (c *Client) OpenHead(ctx context.Context, id string, head []byte) (shoal.Object, int, error) {
	if len(head) == 0 {
		obj, err := c.Open(ctx, id)
		return obj, 0, err
	}
	return c.openHead(ctx, "remote.OpenHead", id, head)
}

func (c *Client) openHead(ctx context.Context, op, id string, head []byte) (shoal.Object, int, error) {
	if !shoal.ValidObjectID(id) {
		return nil, 0, shoal.Errorf(op, shoal.KindInvalid, "bad object id %q", id)
	}
	n := len(head)
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(c.url(fasthttp.MethodGet, id))
	req.Header.Set(fasthttp.HeaderRange, "bytes=0-"+strconv.Itoa(n-1))
	if err := c.do(ctx, req, resp, true); err != nil {
		return nil, 0, transportErr(op, id, err)
	}
	body := resp.Body()
	var size int64
	switch resp.StatusCode() {
	case fasthttp.StatusPartialContent:
		var ok bool
		if size, ok = totalSize(string(resp.Header.Peek(fasthttp.HeaderContentRange)), int64(len(body))); !ok {
			return nil, 0, shoal.Errorf(op, shoal.KindUnavailable, "%s: range 0-%d answered %q with %d bytes",
				id, n-1, resp.Header.Peek(fasthttp.HeaderContentRange), len(body))
		}
	case fasthttp.StatusOK: // the range ignored: the whole object
		size = int64(len(body))
	case fasthttp.StatusRequestedRangeNotSatisfiable: // an empty object
		size, body = 0, nil
	default:
		return nil, 0, statusErr(op, id, resp)
	}
	if len(body) > n { // a 200 with the whole object
		body = body[:n]
	}
	return &object{c: c, id: id, size: size}, copy(head, body), nil
}

// totalSize reads the size from a Content-Range "bytes 0-LAST/SIZE" that
// must describe exactly n bytes from the start.
func totalSize(cr string, n int64) (int64, bool) {
	span, total, ok := strings.Cut(strings.TrimPrefix(cr, "bytes "), "/")
	first, last, ok2 := strings.Cut(span, "-")
	if !ok || !ok2 || first != "0" {
		return 0, false
	}
	l, err1 := strconv.ParseInt(last, 10, 64)
	size, err2 := strconv.ParseInt(total, 10, 64)
	if err1 != nil || err2 != nil || l+1 != n || size < n {
		return 0, false
	}
	return size, true
}
