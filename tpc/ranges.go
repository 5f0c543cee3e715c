package tpc

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"shoal"
)

// A pull asked for X-Number-Of-Streams > 1 fetches the source in Range
// GETs of rangeChunk bytes, up to maxParallel at once, and hands them to
// the sink in order: over a long, thin path several TCP streams move
// more than one. Memory is bounded by maxParallel chunks per pull.
const (
	rangeChunk  = 4 << 20
	maxParallel = 8
)

// parallelism is how many ranges a pull of size bytes fetches at once
// for r (1: a single GET).
func parallelism(r *Request, size int64) int {
	if r.Streams <= 1 || size <= rangeChunk {
		return 1
	}
	return int(min(int64(min(r.Streams, maxParallel)), (size+rangeChunk-1)/rangeChunk))
}

// chunkResult is one fetched range, or why it could not be.
type chunkResult struct {
	b   []byte
	err error
}

// ranged reads [0, size) of the remote as n Range GETs at a time, in
// order. The first range has been fetched already (first); the rest are
// started as the reader consumes, so at most n are held.
type ranged struct {
	ctx    context.Context
	cancel context.CancelFunc
	c      *Client
	r      *Request
	size   int64
	n      int

	results []chan chunkResult
	sem     chan struct{} // a token per range fetched and not yet consumed
	cur     []byte
	k       int // the chunk being read
	wg      sync.WaitGroup
}

func (c *Client) newRanged(ctx context.Context, r *Request, size int64, n int, first []byte) *ranged {
	k := int((size + rangeChunk - 1) / rangeChunk)
	ctx, cancel := context.WithCancel(ctx)
	g := &ranged{ctx: ctx, cancel: cancel, c: c, r: r, size: size, n: n, results: make([]chan chunkResult, k), sem: make(chan struct{}, n)}
	for i := range g.results {
		g.results[i] = make(chan chunkResult, 1)
	}
	g.sem <- struct{}{}
	g.results[0] <- chunkResult{b: first}
	g.wg.Go(g.schedule)
	return g
}

// schedule starts the fetch of each chunk once a token is free.
func (g *ranged) schedule() {
	for k := 1; k < len(g.results); k++ {
		select {
		case g.sem <- struct{}{}:
		case <-g.ctx.Done():
			return
		}
		g.wg.Go(func() { g.results[k] <- g.fetch(k) })
	}
}

// open starts the GET of a pull: a plain GET, or, when r asks for
// several streams, a Range GET of the first chunk that tells whether the
// source serves ranges and how large it is; then the other chunks are
// fetched in parallel (ranged). It returns the body, its size (-1
// unknown) and the source's digest (none from a 206: it may be of the
// range).
func (c *Client) open(ctx context.Context, r *Request) (io.ReadCloser, int64, Digest, error) {
	req, err := c.newRequest(ctx, http.MethodGet, r.Remote.String(), r)
	if err != nil {
		return nil, -1, Digest{}, failf(shoal.KindInvalid, "source %s: %v", Redact(r.Remote), err)
	}
	req.Header.Set("Want-Digest", WantDigest)
	if r.Streams > 1 {
		req.Header.Set("Range", fmt.Sprintf("bytes=0-%d", rangeChunk-1))
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, -1, Digest{}, describe(ctx, "source GET", r.Remote, err)
	}
	switch resp.StatusCode {
	case http.StatusOK:
		d, err := ParseDigest(resp.Header.Get("Digest"))
		if err != nil {
			resp.Body.Close()
			return nil, -1, Digest{}, failf(shoal.KindCorrupt, "source %s: %v", Redact(r.Remote), err)
		}
		return resp.Body, resp.ContentLength, d, nil
	case http.StatusPartialContent:
		if r.Streams > 1 {
			break
		}
		fallthrough
	default:
		defer resp.Body.Close()
		return nil, -1, Digest{}, statusFailure("source GET", resp)
	}
	defer resp.Body.Close()
	from, to, size, ok := parseContentRange(resp.Header.Get("Content-Range"))
	if !ok || from != 0 || to != min(rangeChunk, size)-1 {
		return nil, -1, Digest{}, failf(shoal.KindCorrupt, "source %s answered bytes 0-%d with Content-Range %q", Redact(r.Remote), rangeChunk-1, clip(resp.Header.Get("Content-Range")))
	}
	first := make([]byte, to+1)
	if _, err := io.ReadFull(resp.Body, first); err != nil {
		return nil, -1, Digest{}, failf(shoal.KindUnavailable, "source GET %s: the range 0-%d broke off: %s", Redact(r.Remote), to, describeRead(err))
	}
	return c.newRanged(ctx, r, size, parallelism(r, size), first), size, Digest{}, nil
}

// fetch GETs chunk k.
func (g *ranged) fetch(k int) chunkResult {
	from := int64(k) * rangeChunk
	to := min(from+rangeChunk, g.size) - 1
	b, err := g.c.getRange(g.ctx, g.r, from, to, g.size)
	return chunkResult{b: b, err: err}
}

func (g *ranged) Read(p []byte) (int, error) {
	for len(g.cur) == 0 {
		if g.k == len(g.results) {
			return 0, io.EOF
		}
		select {
		case res := <-g.results[g.k]:
			if res.err != nil {
				return 0, res.err
			}
			g.cur = res.b
			g.k++
			<-g.sem
		case <-g.ctx.Done():
			return 0, context.Cause(g.ctx)
		}
	}
	n := copy(p, g.cur)
	g.cur = g.cur[n:]
	return n, nil
}

// Close stops the fetches in flight and waits for them (each result
// channel has room for its one result: none blocks).
func (g *ranged) Close() error {
	g.cancel()
	g.wg.Wait()
	return nil
}

// getRange GETs bytes [from, to] of a remote of size bytes, checking the
// answer is that range.
func (c *Client) getRange(ctx context.Context, r *Request, from, to, size int64) ([]byte, error) {
	req, err := c.newRequest(ctx, http.MethodGet, r.Remote.String(), r)
	if err != nil {
		return nil, failf(shoal.KindInvalid, "source %s: %v", Redact(r.Remote), err)
	}
	req.Header.Set("Range", fmt.Sprintf("bytes=%d-%d", from, to))
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, describe(ctx, "source GET", r.Remote, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent {
		return nil, statusFailure("source GET of a range of", resp)
	}
	if f, t, total, ok := parseContentRange(resp.Header.Get("Content-Range")); !ok || f != from || t != to || total != size {
		return nil, failf(shoal.KindCorrupt, "source %s answered bytes %d-%d with Content-Range %q", Redact(r.Remote), from, to, clip(resp.Header.Get("Content-Range")))
	}
	b := make([]byte, to-from+1)
	if _, err := io.ReadFull(resp.Body, b); err != nil {
		if ctx.Err() != nil {
			return nil, describe(ctx, "source GET", r.Remote, ctx.Err())
		}
		return nil, failf(shoal.KindUnavailable, "source GET %s: the range %d-%d broke off: %s", Redact(r.Remote), from, to, describeRead(err))
	}
	return b, nil
}

// parseContentRange reads "bytes FROM-TO/SIZE".
func parseContentRange(h string) (from, to, size int64, ok bool) {
	rest, found := strings.CutPrefix(strings.TrimSpace(h), "bytes ")
	if !found {
		return 0, 0, 0, false
	}
	span, total, found := strings.Cut(rest, "/")
	a, b, found2 := strings.Cut(span, "-")
	if !found || !found2 {
		return 0, 0, 0, false
	}
	var err1, err2, err3 error
	from, err1 = strconv.ParseInt(a, 10, 64)
	to, err2 = strconv.ParseInt(b, 10, 64)
	size, err3 = strconv.ParseInt(total, 10, 64)
	return from, to, size, err1 == nil && err2 == nil && err3 == nil && from >= 0 && from <= to && to < size
}
