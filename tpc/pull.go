package tpc

import (
	"context"
	"crypto/md5"
	"errors"
	"hash"
	"hash/adler32"
	"io"
	"net/http"
	"strings"

	"shoal"
)

// Sink is where a pull writes: the server's ordinary upload path, so a
// pulled file is "complete or invisible" like a PUT.
type Sink struct {
	// Store writes body (size bytes, -1 when unknown) and returns the
	// checksums it computed, making nothing visible; Commit then makes it
	// visible and Abort removes it. A Store that commits by itself when
	// its body ends (md's proxy mode, streaming to a data server) leaves
	// Commit nil: the pull then checksums the body on its way and holds
	// back its last byte until the source's digest matched.
	Store  func(ctx context.Context, body io.Reader, size int64) (shoal.Sums, error)
	Commit func(ctx context.Context) error
	Abort  func()
}

// Stat asks the source of a pull for its size (md reserves space from
// it): a HEAD through the guard with the copy's transfer headers. It
// returns -1 when the source does not say. A refusal by the guard, or a
// source that is not there (404, 410), is an error; so is any other
// failure, which a caller may ignore (some sources answer GET only).
func (c *Client) Stat(ctx context.Context, r *Request) (int64, error) {
	return c.head(ctx, r, "source HEAD")
}

// Exists asks the destination of a push whether its file is there (a
// HEAD through the guard): true on 2xx, false on 404 or 410, else an
// error.
func (c *Client) Exists(ctx context.Context, r *Request) (bool, error) {
	_, err := c.head(ctx, r, "destination HEAD")
	switch {
	case err == nil:
		return true, nil
	case shoal.IsKind(err, shoal.KindNotFound):
		return false, nil
	}
	return false, err
}

// head is a HEAD of r's remote: its Content-Length (-1 unknown).
func (c *Client) head(ctx context.Context, r *Request, what string) (int64, error) {
	req, err := c.newRequest(ctx, http.MethodHead, r.Remote.String(), r)
	if err != nil {
		return -1, failf(shoal.KindInvalid, "%s %s: %v", what, Redact(r.Remote), err)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return -1, describe(ctx, what, r.Remote, err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return -1, statusFailure(what, resp)
	}
	return resp.ContentLength, nil
}

// Pull copies the source of r into s: a GET (with Want-Digest) through
// the guard and the client's timeouts — or, with r.Streams > 1 and a
// source that serves ranges, parallel Range GETs put back in order —,
// the body streamed into s.Store while p counts it; then, when the source gave a digest, or when r asks
// for verification (a HEAD with Want-Digest if the GET gave none), the
// checksums compared; then s.Commit. Any failure — the source's status,
// a cut body, a timeout, a cancelled ctx (the client hung up), a
// mismatch, a full disk, a refused commit — leaves nothing visible and
// is returned as a *Failure.
func (c *Client) Pull(ctx context.Context, r *Request, s Sink, p *Progress) error {
	ctx, wd, stop := watch(traced(ctx, p), c.opts.IdleTimeout)
	defer stop()
	body0, size, digest, err := c.open(ctx, r)
	if err != nil {
		return err
	}
	defer body0.Close()
	wd.arm(true)
	src := &counter{r: body0, p: p, w: wd}
	var body io.Reader = src
	var held *heldReader
	if s.Commit == nil {
		held = &heldReader{r: src, size: size, ad: adler32.New(), md: md5.New(),
			check: func(sums shoal.Sums) error { return c.verify(ctx, r, digest, sums) }}
		body = held
		if size == 0 {
			// Nothing to hold back: an empty body is checked before the
			// Store that would commit it at once.
			if _, err := held.Read(nil); err != io.EOF {
				return err
			}
		}
	}
	sums, err := s.Store(ctx, body, size)
	wd.arm(false)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return describe(ctx, "source GET", r.Remote, ctx.Err())
		case held != nil && held.failed != nil:
			return held.failed
		case src.err != nil && src.err != io.EOF:
			var f *Failure
			if errors.As(src.err, &f) {
				return f // a range's own failure
			}
			return failf(shoal.KindUnavailable, "source GET %s: the body broke off after %d bytes: %v", Redact(r.Remote), src.n, describeRead(src.err))
		}
		return failf(shoal.KindOf(err), "storing the copy: %s", ReasonOf(err))
	}
	if s.Commit == nil {
		return nil // checked on the way, committed by Store
	}
	if err := c.verify(ctx, r, digest, sums); err != nil {
		s.Abort()
		return err
	}
	if ctx.Err() != nil {
		s.Abort()
		return describe(ctx, "copy", r.Remote, ctx.Err())
	}
	if err := s.Commit(ctx); err != nil {
		return failf(shoal.KindOf(err), "committing the copy: %s", ReasonOf(err))
	}
	return nil
}

// verify compares what was received (sums) with the source's digest: the
// one its GET gave, checked whenever it shares an algorithm with sums;
// else, when r asks for verification, the one a HEAD with Want-Digest
// gives, and a source that gives none fails the copy.
func (c *Client) verify(ctx context.Context, r *Request, d Digest, sums shoal.Sums) error {
	if !d.comparable(sums) {
		if !r.Verify {
			return nil
		}
		var err error
		if d, err = c.headDigest(ctx, r, r.Remote.String()); err != nil {
			return err
		}
		if !d.comparable(sums) {
			return failf(shoal.KindCorrupt, "source %s gives no adler32 or md5 Digest to verify the copy with (RequireChecksumVerification: false copies without)", Redact(r.Remote))
		}
	}
	if m := d.Mismatch(sums); m != "" {
		return failf(shoal.KindCorrupt, "source %s: %s", Redact(r.Remote), m)
	}
	return nil
}

// headDigest asks u for its Digest (HEAD with Want-Digest).
func (c *Client) headDigest(ctx context.Context, r *Request, u string) (Digest, error) {
	req, err := c.newRequest(ctx, http.MethodHead, u, r)
	if err != nil {
		return Digest{}, failf(shoal.KindInvalid, "%s: %v", Redact(r.Remote), err)
	}
	req.Header.Set("Want-Digest", WantDigest)
	resp, err := c.http.Do(req)
	if err != nil {
		return Digest{}, describe(ctx, "HEAD for the Digest of", req.URL, err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return Digest{}, statusFailure("HEAD for the Digest of", resp)
	}
	d, err := ParseDigest(resp.Header.Get("Digest"))
	if err != nil {
		return Digest{}, failf(shoal.KindCorrupt, "%s: %v", Redact(req.URL), err)
	}
	return d, nil
}

// statusFailure is the failure of a request the peer answered with an
// unexpected status: the status and the first line of its text, if any.
func statusFailure(what string, resp *http.Response) error {
	kind := shoal.KindUnavailable
	switch resp.StatusCode {
	case http.StatusNotFound, http.StatusGone:
		kind = shoal.KindNotFound
	case http.StatusUnauthorized, http.StatusForbidden:
		kind = shoal.KindPermission
	case http.StatusPreconditionFailed:
		kind = shoal.KindPrecondition
	case http.StatusInsufficientStorage:
		kind = shoal.KindInsufficient
	}
	msg := ""
	if resp.Request != nil && resp.Request.Method != http.MethodHead {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
			line, _, _ := strings.Cut(string(b), "\n")
			if line = strings.TrimSpace(line); line != "" && validValue(line) {
				msg = ": " + clip(line)
			}
		}
	}
	where := ""
	if resp.Request != nil {
		where = Redact(resp.Request.URL)
	}
	return failf(kind, "%s %s answered %s%s", what, where, resp.Status, msg)
}

// describeRead names a body read error without quoting a URL.
func describeRead(err error) string {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "unexpected end of the body"
	}
	return err.Error()
}

// heldReader passes a body on to a writer that makes it visible when it
// ends — a Store that commits by itself (md's proxy mode), a push's PUT —
// checksumming the bytes on their way (adler32, and md5 when md is set)
// and holding back the last one (a body of unknown length: its end)
// until the check passed, so a mismatch or a cut source breaks the
// upload before it can complete.
type heldReader struct {
	r      io.Reader
	size   int64 // -1: unknown
	got    int64
	ad     hash.Hash32
	md     hash.Hash
	check  func(shoal.Sums) error
	done   bool
	failed error // the check's failure, also Read's error
	tail   []byte
}

func (h *heldReader) Read(b []byte) (int, error) {
	if h.done {
		if len(h.tail) > 0 {
			n := copy(b, h.tail)
			h.tail = h.tail[n:]
			return n, nil
		}
		if h.failed != nil {
			return 0, h.failed
		}
		return 0, io.EOF
	}
	if h.size >= 0 && h.got >= h.size-1 {
		// The last byte (or none, for an empty body): read it and the end.
		var last [2]byte
		n, err := io.ReadFull(h.r, last[:])
		switch {
		case err == io.ErrUnexpectedEOF || err == io.EOF:
		case err == nil:
			return 0, h.fail(failf(shoal.KindCorrupt, "source sent more than its Content-Length"))
		default:
			return 0, err
		}
		if h.got+int64(n) != h.size {
			return 0, io.ErrUnexpectedEOF
		}
		h.write(last[:n])
		if err := h.finish(); err != nil {
			return 0, err
		}
		h.tail = append(h.tail, last[:n]...)
		return h.Read(b)
	}
	if h.size >= 0 {
		b = b[:min(int64(len(b)), h.size-1-h.got)]
	}
	n, err := h.r.Read(b)
	h.write(b[:n])
	if err == io.EOF {
		if h.size >= 0 {
			return n, io.ErrUnexpectedEOF
		}
		if ferr := h.finish(); ferr != nil {
			return 0, ferr // the bytes of this read are held back for good
		}
		return n, io.EOF
	}
	return n, err
}

func (h *heldReader) write(b []byte) {
	h.got += int64(len(b))
	h.ad.Write(b)
	if h.md != nil {
		h.md.Write(b)
	}
}

// finish runs the check once the whole body went through the hashes.
func (h *heldReader) finish() error {
	h.done = true
	sums := shoal.Sums{Adler32: h.ad.Sum32()}
	if h.md != nil {
		sums.MD5 = h.md.Sum(nil)
	}
	if err := h.check(sums); err != nil {
		return h.fail(err)
	}
	return nil
}

func (h *heldReader) fail(err error) error {
	h.done, h.failed, h.tail = true, err, nil
	return err
}
