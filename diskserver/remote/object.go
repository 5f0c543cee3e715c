package remote

import (
	"context"
	"io"
	"strconv"

	"github.com/valyala/fasthttp"

	"shoal"
)

// object is an open remote object: each ReadAt is one Range GET.
type object struct {
	c    *Client
	id   string
	size int64
}

func (o *object) Size() int64  { return o.size }
func (o *object) Close() error { return nil }

// ReadAt implements io.ReaderAt; a read across the end returns the bytes
// there are and io.EOF.
func (o *object) ReadAt(p []byte, off int64) (int, error) {
	const op = "remote.ReadAt"
	if off < 0 {
		return 0, shoal.Errorf(op, shoal.KindInvalid, "negative offset")
	}
	if off >= o.size {
		return 0, io.EOF
	}
	want := int64(len(p))
	if want == 0 {
		return 0, nil
	}
	var eof error
	if off+want > o.size {
		want, eof = o.size-off, io.EOF
	}
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(o.c.url(fasthttp.MethodGet, o.id))
	req.Header.Set(fasthttp.HeaderRange, "bytes="+strconv.FormatInt(off, 10)+"-"+strconv.FormatInt(off+want-1, 10))
	if err := o.c.do(context.Background(), req, resp, true); err != nil {
		return 0, transportErr(op, o.id, err)
	}
	if resp.StatusCode() != fasthttp.StatusPartialContent {
		return 0, statusErr(op, o.id, resp)
	}
	n := copy(p, resp.Body())
	if int64(n) != want {
		return n, shoal.Errorf(op, shoal.KindCorrupt, "%s: got %d bytes at %d, want %d", o.id, n, off, want)
	}
	return n, eof
}
