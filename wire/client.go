package wire

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/sign"
)

// Client calls md's internal API (or a data server's) with signed requests.
type Client struct {
	Base    string // e.g. http://127.0.0.1:8080
	Keys    *sign.Keys
	HTTP    *fasthttp.Client
	Timeout time.Duration // per call; 0 means 10s
}

// NewClient returns a client for base with its own connection pool.
func NewClient(base string, keys *sign.Keys) *Client {
	return &Client{
		Base: strings.TrimRight(base, "/"),
		Keys: keys,
		HTTP: &fasthttp.Client{
			Name:                     "shoal-internal",
			NoDefaultUserAgentHeader: true,
			MaxConnsPerHost:          64,
			ReadTimeout:              30 * time.Second,
			WriteTimeout:             30 * time.Second,
		},
	}
}

// Call POSTs in (JSON) to path and decodes the reply into out (may be nil).
// It returns the HTTP status; a status ≥ 300 is returned as an *shoal.Error
// with the answer's kind (see ResponseError) and md's reason text.
func (c *Client) Call(path string, in, out any) (int, error) {
	return c.call(path, in, out, nil)
}

// Commit sends a finished upload's commit (PathCommit). md answers a
// replacement with 204, which carries no body: the new ETag then comes
// from the answer's header.
func (c *Client) Commit(in CommitRequest) (CommitReply, int, error) {
	var reply CommitReply
	status, err := c.call(PathCommit, in, &reply, func(h *fasthttp.ResponseHeader) {
		if reply.ETag == "" {
			reply.ETag = string(h.Peek(fasthttp.HeaderETag))
		}
	})
	return reply, status, err
}

// Servers lists the data servers and gws md knows (PathAdminServers), and
// md's md.server_ttl, which says which of them are live (0 from an md
// that does not say it).
func (c *Client) Servers() ([]shoal.Server, time.Duration, error) {
	var servers []shoal.Server
	var ttl time.Duration
	_, err := c.call(PathAdminServers, struct{}{}, &servers, func(h *fasthttp.ResponseHeader) {
		ttl, _ = time.ParseDuration(string(h.Peek(HeaderServerTTL)))
	})
	return servers, ttl, err
}

// call is Call; header, when set, sees the answer's header after its body
// was decoded.
func (c *Client) call(path string, in, out any, header func(*fasthttp.ResponseHeader)) (int, error) {
	const op = "wire.Call"
	body, err := json.Marshal(in)
	if err != nil {
		return 0, shoal.E(op, path, err)
	}
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(c.Base + path)
	req.Header.SetMethod(fasthttp.MethodPost)
	req.Header.SetContentType("application/json")
	SignCall(c.Keys, fasthttp.MethodPost, path, body, callTTL).Set(req.Header.Set)
	req.SetBody(body)
	timeout := c.Timeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	if err := c.HTTP.DoTimeout(req, resp, timeout); err != nil {
		return 0, shoal.E(op, c.Base+path, shoal.KindUnavailable, err)
	}
	status := resp.StatusCode()
	if status >= 300 {
		return status, ResponseError(op, path, status, func(k string) string { return string(resp.Header.Peek(k)) }, resp.Body())
	}
	if out != nil && len(resp.Body()) > 0 {
		if err := json.Unmarshal(resp.Body(), out); err != nil {
			return status, shoal.E(op, path, err)
		}
	}
	if header != nil {
		header(&resp.Header)
	}
	return status, nil
}
