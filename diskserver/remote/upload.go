package remote

import (
	"context"
	"io"
	"time"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/internal/netguard"
	"shoal/wire"
)

// UploadResult is the data server's answer to a committed upload.
type UploadResult struct {
	Status int    // md's status, relayed: 201 created, 204 replaced
	ETag   string // the new entry's ETag, from md
	Size   int64
	Sums   shoal.Sums
}

// Upload streams r as object id for upload (a PUT with the upload id, which
// the data server commits to md before answering): md's proxy mode. size
// is the body length, or -1 if unknown (sent chunked). A refused commit
// comes back as an error of md's kind with md's reason; the object is gone.
func (c *Client) Upload(ctx context.Context, id, upload string, r io.Reader, size int64) (UploadResult, error) {
	const op = "remote.Upload"
	if !shoal.ValidObjectID(id) {
		return UploadResult{}, shoal.Errorf(op, shoal.KindInvalid, "bad object id %q", id)
	}
	ttl := c.URLTTL
	if ttl <= 0 {
		ttl = DefaultURLTTL
	}
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(fasthttp.MethodPut)
	req.SetRequestURI(c.Keys.URL(c.Base, fasthttp.MethodPut, id, upload, time.Now().Add(ttl)))
	body := &ctxReader{ctx: ctx, r: r}
	req.SetBodyStream(body, netguard.RequestLength(size))
	err := c.do(ctx, req, resp, false)
	if body.rerr != nil {
		return UploadResult{}, shoal.E(op, id, body.rerr)
	}
	if err != nil {
		return UploadResult{}, transportErr(op, id, err)
	}
	st := resp.StatusCode()
	if st != fasthttp.StatusCreated && st != fasthttp.StatusNoContent {
		return UploadResult{}, statusErr(op, id, resp)
	}
	sums, err := parseDigest(string(resp.Header.Peek(wire.HeaderDigest)))
	if err != nil {
		return UploadResult{}, shoal.E(op, id, err)
	}
	return UploadResult{Status: st, ETag: string(resp.Header.Peek(fasthttp.HeaderETag)), Size: body.n, Sums: sums}, nil
}
