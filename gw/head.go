package gw

import (
	"context"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/diskserver/remote"
	"shoal/wire"
)

// headSize is how much of a shard object opening it reads at once: the
// whole shard of a file of one default stripe (1 MiB at K=4, so every small
// file), or the header and the first chunk of a larger one, which the
// first stripe read then takes from memory. On a remote data server that is
// one Range GET, which also tells the object's size: no HEAD, no separate
// header and footer reads.
const headSize = DefaultStripeSize/4 + headerSize + crcSize + footerSize

// headObject is a shard object whose first bytes are in memory. Reads
// within them cost nothing; others go to rest (nil when head is the whole
// object).
type headObject struct {
	head   []byte
	size   int64
	rest   shoal.Object
	pooled bool // head came from the chunk buffer pool

	mu     sync.Mutex
	closed bool
}

func (h *headObject) Size() int64 { return h.size }

func (h *headObject) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, shoal.Errorf("gw.ReadAt", shoal.KindInvalid, "negative offset")
	}
	if end := off + int64(len(p)); end <= int64(len(h.head)) || h.rest == nil {
		if off >= int64(len(h.head)) {
			return 0, io.EOF
		}
		n := copy(p, h.head[off:])
		if n < len(p) {
			return n, io.EOF
		}
		return n, nil
	}
	return h.rest.ReadAt(p, off)
}

// Close releases the head; a second Close does nothing (the buffer must go
// back to the pool once).
func (h *headObject) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil
	}
	h.closed = true
	if h.pooled {
		putChunkBuf(h.head[:cap(h.head)])
	}
	h.head = nil
	if h.rest != nil {
		return h.rest.Close()
	}
	return nil
}

// openShard opens shard i of id with its first headSize bytes read.
func (s *Store) openShard(ctx context.Context, i int, id string) (*headObject, error) {
	if c, ok := s.shards[i].(*remote.Client); ok {
		return openRemoteShard(ctx, c, id)
	}
	obj, err := s.shards[i].Open(ctx, id)
	if err != nil {
		return nil, err
	}
	size := obj.Size()
	h := &headObject{size: size, rest: obj}
	if n := min(size, headSize); n < headSize {
		h.head = make([]byte, n)
	} else {
		h.head, h.pooled = getChunkBuf(headSize), true
	}
	if err := readFull(obj, h.head, 0); err != nil {
		h.Close()
		return nil, err
	}
	if size <= headSize {
		h.rest = nil
		obj.Close()
	}
	return h, nil
}

// openRemoteShard reads the first headSize bytes of id on a remote data
// server with one Range GET, whose Content-Range gives the object's size.
func openRemoteShard(ctx context.Context, c *remote.Client, id string) (*headObject, error) {
	const op = "gw.open"
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(signedGet(c, id))
	req.Header.Set(fasthttp.HeaderRange, "bytes=0-"+strconv.Itoa(headSize-1))
	if err := doRemote(ctx, c, req, resp); err != nil {
		return nil, shoal.E(op, id, shoal.KindUnavailable, err)
	}
	body := resp.Body()
	var size int64
	switch resp.StatusCode() {
	case fasthttp.StatusPartialContent:
		var ok bool
		if size, ok = totalSize(string(resp.Header.Peek(fasthttp.HeaderContentRange)), int64(len(body))); !ok {
			return nil, shoal.Errorf(op, shoal.KindUnavailable, "%s: range 0-%d answered %q with %d bytes", id, headSize-1, resp.Header.Peek(fasthttp.HeaderContentRange), len(body))
		}
	case fasthttp.StatusOK: // the range ignored: the whole object
		size = int64(len(body))
	case fasthttp.StatusRequestedRangeNotSatisfiable: // an empty object
		size, body = 0, nil
	default:
		return nil, remoteStatus(op, id, resp)
	}
	h := &headObject{size: size}
	if len(body) < headSize {
		h.head = append([]byte(nil), body...)
	} else {
		h.head, h.pooled = getChunkBuf(headSize), true
		copy(h.head, body)
	}
	if size > int64(len(h.head)) {
		h.rest = &rangeObject{c: c, id: id, size: size}
	}
	return h, nil
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

// rangeObject reads a remote object of known size with one Range GET per
// ReadAt (remote.Client's Open would first send a HEAD for the size).
type rangeObject struct {
	c    *remote.Client
	id   string
	size int64
}

func (r *rangeObject) Size() int64  { return r.size }
func (r *rangeObject) Close() error { return nil }

func (r *rangeObject) ReadAt(p []byte, off int64) (int, error) {
	const op = "gw.ReadAt"
	if off < 0 {
		return 0, shoal.Errorf(op, shoal.KindInvalid, "negative offset")
	}
	if off >= r.size {
		return 0, io.EOF
	}
	want := min(int64(len(p)), r.size-off)
	if want == 0 {
		return 0, nil
	}
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(signedGet(r.c, r.id))
	req.Header.Set(fasthttp.HeaderRange, "bytes="+strconv.FormatInt(off, 10)+"-"+strconv.FormatInt(off+want-1, 10))
	if err := doRemote(context.Background(), r.c, req, resp); err != nil {
		return 0, shoal.E(op, r.id, shoal.KindUnavailable, err)
	}
	if resp.StatusCode() != fasthttp.StatusPartialContent {
		return 0, remoteStatus(op, r.id, resp)
	}
	n := copy(p, resp.Body())
	if int64(n) != want || int64(len(resp.Body())) != want {
		return n, shoal.Errorf(op, shoal.KindUnavailable, "%s: got %d bytes at %d, want %d", r.id, len(resp.Body()), off, want)
	}
	if want < int64(len(p)) {
		return n, io.EOF
	}
	return n, nil
}

// signedGet is a GET URL for id on c, signed as remote.Client signs them.
func signedGet(c *remote.Client, id string) string {
	ttl := c.URLTTL
	if ttl <= 0 {
		ttl = remote.DefaultURLTTL
	}
	return c.Keys.URL(c.Base, fasthttp.MethodGet, id, "", time.Now().Add(ttl))
}

// doRemote sends req with c's HTTP client, bounded by ctx's deadline or
// c.Timeout, as remote.Client does.
func doRemote(ctx context.Context, c *remote.Client, req *fasthttp.Request, resp *fasthttp.Response) error {
	if d, ok := ctx.Deadline(); ok {
		return c.HTTP.DoDeadline(req, resp, d)
	}
	if c.Timeout > 0 {
		return c.HTTP.DoTimeout(req, resp, c.Timeout)
	}
	return c.HTTP.Do(req, resp)
}

// remoteStatus is the error for a data server's failed answer, of the kind
// its status says, with its short reason.
func remoteStatus(op, id string, resp *fasthttp.Response) error {
	kind := wire.KindForStatus(resp.StatusCode())
	reason := strings.TrimPrefix(strings.TrimSpace(string(resp.Body())), kind.String()+": ")
	if reason == "" {
		reason = strconv.Itoa(resp.StatusCode())
	}
	return shoal.Errorf(op, kind, "%s: %s", id, reason)
}
