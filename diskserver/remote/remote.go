// Package remote is a shoal.BlobStore over HTTP: the client of a data
// server (diskserver, or anything speaking its protocol), used by md in
// proxy mode and for fsck, and by gw for shards. Every request carries a
// URL signed with the cluster keys. It also implements the optional
// shoal.HeadOpener and shoal.RangeOpener, which save round trips.
//
// remote imports only the root package, sign and wire (and fasthttp), not
// diskserver: its users need the protocol, not the server.
package remote

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/sign"
	"shoal/wire"
)

// DefaultURLTTL is how long the signed URLs the client makes stay valid.
const DefaultURLTTL = 5 * time.Minute

// Client is a shoal.BlobStore on a remote data server.
type Client struct {
	Base   string
	Keys   *sign.Keys
	HTTP   *fasthttp.Client
	URLTTL time.Duration // 0: DefaultURLTTL
	// Timeout bounds each request that has no ctx deadline, except the
	// body upload of Create, which streams for as long as it takes.
	Timeout time.Duration
	// TLS is the client config of https calls (NewTLS); nil: the system
	// roots. Streams opened outside HTTP (gw's spans) use it too.
	TLS  *tls.Config
	wire *wire.Client
}

var _ shoal.BlobStore = (*Client)(nil)

// New returns a client for the data server at baseURL.
func New(baseURL string, keys *sign.Keys) *Client {
	base := strings.TrimRight(baseURL, "/")
	return &Client{
		Base: base,
		Keys: keys,
		HTTP: &fasthttp.Client{
			Name:                     "shoal-remote",
			NoDefaultUserAgentHeader: true,
			MaxConnsPerHost:          256,
			StreamResponseBody:       false,
			MaxIdleConnDuration:      time.Minute,
		},
		Timeout: 30 * time.Second,
		wire:    wire.NewClient(base, keys),
	}
}

func (c *Client) url(method, id string) string {
	ttl := c.URLTTL
	if ttl <= 0 {
		ttl = DefaultURLTTL
	}
	return c.Keys.URL(c.Base, method, id, "", time.Now().Add(ttl))
}

// do sends req, bounded by ctx's deadline or c.Timeout (none if both unset).
func (c *Client) do(ctx context.Context, req *fasthttp.Request, resp *fasthttp.Response, bounded bool) error {
	if d, ok := ctx.Deadline(); ok {
		return c.HTTP.DoDeadline(req, resp, d)
	}
	if bounded && c.Timeout > 0 {
		return c.HTTP.DoTimeout(req, resp, c.Timeout)
	}
	return c.HTTP.Do(req, resp)
}

// statusErr turns a failed response into an error of the kind its status
// says, with the server's reason.
func statusErr(op, id string, resp *fasthttp.Response) error {
	return httpStatusErr(op, id, resp.StatusCode(), func(k string) string { return string(resp.Header.Peek(k)) }, resp.Body())
}

// httpStatusErr is statusErr for any client: the status, the response
// headers (read with header) and the body.
func httpStatusErr(op, id string, status int, header func(string) string, body []byte) error {
	return wire.ResponseError(op, id, status, header, body)
}

func transportErr(op, id string, err error) error {
	return shoal.E(op, id, shoal.KindUnavailable, err)
}

// ctxReader stops an upload when its context ends and remembers the
// reader's own error, which explains a failed upload better than the
// broken connection it causes.
type ctxReader struct {
	ctx  context.Context
	r    io.Reader
	n    int64
	rerr error
}

func (r *ctxReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		r.rerr = err
		return 0, err
	}
	n, err := r.r.Read(p)
	r.n += int64(n)
	if err != nil && err != io.EOF {
		r.rerr = err
	}
	return n, err
}

// Create implements shoal.BlobStore: a raw PUT (no commit), streamed with
// chunked encoding; the size and checksums come from the server's answer.
func (c *Client) Create(ctx context.Context, id string, r io.Reader) (shoal.ObjectInfo, shoal.Sums, error) {
	const op = "remote.Create"
	if !shoal.ValidObjectID(id) {
		return shoal.ObjectInfo{}, shoal.Sums{}, shoal.Errorf(op, shoal.KindInvalid, "bad object id %q", id)
	}
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(fasthttp.MethodPut)
	req.SetRequestURI(c.url(fasthttp.MethodPut, id))
	body := &ctxReader{ctx: ctx, r: r}
	req.SetBodyStream(body, -1)
	err := c.do(ctx, req, resp, false)
	if body.rerr != nil {
		return shoal.ObjectInfo{}, shoal.Sums{}, shoal.E(op, id, body.rerr)
	}
	if err != nil {
		return shoal.ObjectInfo{}, shoal.Sums{}, transportErr(op, id, err)
	}
	if resp.StatusCode() == shoal.KindExist.Status() {
		// PUT is allowed on objects, so its 405 can only mean "exists".
		return shoal.ObjectInfo{}, shoal.Sums{}, shoal.E(op, id, shoal.KindExist)
	}
	if resp.StatusCode() != fasthttp.StatusCreated {
		return shoal.ObjectInfo{}, shoal.Sums{}, statusErr(op, id, resp)
	}
	sums, err := parseDigest(string(resp.Header.Peek(wire.HeaderDigest)))
	if err != nil {
		return shoal.ObjectInfo{}, shoal.Sums{}, shoal.E(op, id, err)
	}
	size, err := strconv.ParseInt(string(resp.Header.Peek(wire.HeaderSize)), 10, 64)
	if err != nil || size != body.n {
		return shoal.ObjectInfo{}, shoal.Sums{}, shoal.Errorf(op, shoal.KindCorrupt, "server stored %q bytes, %d sent", resp.Header.Peek(wire.HeaderSize), body.n)
	}
	return shoal.ObjectInfo{ID: id, Size: size, ModTime: time.Now()}, sums, nil
}

// parseDigest reads "adler32=<hex>,md5=<base64>" (RFC 3230).
func parseDigest(h string) (shoal.Sums, error) {
	var adler, md5hex string
	for _, part := range strings.Split(h, ",") {
		alg, val, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch strings.ToLower(alg) {
		case "adler32":
			adler = val
		case "md5":
			b, err := base64.StdEncoding.DecodeString(val)
			if err != nil {
				return shoal.Sums{}, shoal.Errorf("remote.Digest", shoal.KindInvalid, "bad md5 digest")
			}
			md5hex = hexString(b)
		}
	}
	return wire.ParseSums(adler, md5hex, "")
}

func hexString(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 2*len(b))
	for i, c := range b {
		out[2*i], out[2*i+1] = digits[c>>4], digits[c&15]
	}
	return string(out)
}

// Open implements shoal.BlobStore: one Range GET of the first byte,
// whose Content-Range gives the size (OpenHead); reads are Range GETs. Not
// a HEAD: its Content-Length would be the size, which fasthttp cannot
// parse past 2 GiB on 32-bit ARM.
func (c *Client) Open(ctx context.Context, id string) (shoal.Object, error) {
	var b [1]byte
	obj, _, err := c.openHead(ctx, "remote.Open", id, b[:])
	return obj, err
}

// Remove implements shoal.BlobStore.
func (c *Client) Remove(ctx context.Context, id string) error {
	const op = "remote.Remove"
	if !shoal.ValidObjectID(id) {
		return shoal.Errorf(op, shoal.KindInvalid, "bad object id %q", id)
	}
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(fasthttp.MethodDelete)
	req.SetRequestURI(c.url(fasthttp.MethodDelete, id))
	if err := c.do(ctx, req, resp, true); err != nil {
		return transportErr(op, id, err)
	}
	switch resp.StatusCode() {
	case fasthttp.StatusNoContent, fasthttp.StatusOK, fasthttp.StatusNotFound:
		return nil
	}
	return statusErr(op, id, resp)
}

// Walk implements shoal.BlobStore with one wire.PathObjects call.
func (c *Client) Walk(ctx context.Context, fn func(shoal.ObjectInfo) error) error {
	var list wire.ObjectList
	if _, err := c.wire.Call(wire.PathObjects, struct{}{}, &list); err != nil {
		return shoal.E("remote.Walk", c.Base, err)
	}
	for _, o := range list.Objects {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(o); err != nil {
			return err
		}
	}
	return nil
}

// Space implements shoal.BlobStore with the wire.PathSpace call.
func (c *Client) Space(ctx context.Context) (shoal.Space, error) {
	var sp shoal.Space
	if _, err := c.wire.Call(wire.PathSpace, struct{}{}, &sp); err != nil {
		return shoal.Space{}, shoal.E("remote.Space", c.Base, err)
	}
	return sp, nil
}
