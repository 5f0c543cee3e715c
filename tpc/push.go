package tpc

import (
	"context"
	"hash/adler32"
	"io"
	"net/http"
	"strconv"

	"shoal"
)

// Source is what a push sends: a file of this server.
type Source struct {
	Size int64
	// Sums are the file's checksums as the catalog keeps them: the bytes
	// sent must match its adler32, and the destination's Digest them.
	Sums shoal.Sums
	// Open reads the file from its first byte; it is called again when a
	// redirect needs the body sent anew.
	Open func(ctx context.Context) (io.ReadCloser, error)
}

// Push sends src to r's destination: a PUT with Expect: 100-continue
// through the guard, following 301, 302, 303, 307 and 308 (the body sent
// again each time; Authorization and Cookie only to the destination's own
// host), with If-None-Match: * when r does not overwrite. The bytes read
// here must match src's adler32: the last one is held back until they
// did, so a bad copy here breaks the PUT instead of completing it. Then a
// HEAD with Want-Digest of the destination must agree on size and
// checksum, verification asked for or not (a 2xx to a PUT proves
// nothing kept: a HEAD answering 404 fails the push) — when r asks for
// verification, a destination that gives no digest, or refuses the
// HEAD, fails too; without, a HEAD refused (401, 403, 405, 501) leaves
// the PUT's answer to stand. A pushed file that fails that check is DELETEd. A push cut short (the client hung up, a timeout, the
// destination refused) deletes nothing: a destination keeps the old file
// of a PUT it did not complete.
func (c *Client) Push(ctx context.Context, r *Request, src Source, p *Progress) error {
	ctx, wd, stop := watch(traced(ctx, p), c.opts.IdleTimeout)
	defer stop()
	u := r.Remote
	var sent *counter
	var sum uint32
	for hop := 0; ; hop++ {
		body, err := src.Open(ctx)
		if err != nil {
			return failf(shoal.KindOf(err), "reading the file to push: %s", ReasonOf(err))
		}
		sent = &counter{r: body, p: p, w: wd}
		held := &heldReader{r: sent, size: src.Size, ad: adler32.New(), check: func(s shoal.Sums) error {
			sum = s.Adler32
			if s.Adler32 != src.Sums.Adler32 {
				return failf(shoal.KindCorrupt, "the file read here (adler32 %08x) does not match its checksum (adler32 %08x): not pushed", s.Adler32, src.Sums.Adler32)
			}
			return nil
		}}
		req, err := c.newRequest(ctx, http.MethodPut, u.String(), r)
		if err != nil {
			body.Close()
			return failf(shoal.KindInvalid, "destination %s: %v", Redact(u), err)
		}
		if u.Hostname() != r.Remote.Hostname() {
			req.Header.Del("Authorization") // the token is for the destination, not where it sends us
			req.Header.Del("Cookie")
		}
		req.ContentLength = src.Size
		if src.Size > 0 {
			req.Body = io.NopCloser(held)
			req.Header.Set("Expect", "100-continue")
		} else {
			req.Body = http.NoBody
		}
		if !r.Overwrite {
			req.Header.Set("If-None-Match", "*")
		}
		wd.arm(true)
		resp, err := c.noRedirect().Do(req)
		wd.arm(false)
		body.Close()
		if err != nil {
			if held.failed != nil {
				return held.failed
			}
			return describe(ctx, "destination PUT", u, err)
		}
		switch resp.StatusCode {
		case http.StatusOK, http.StatusCreated, http.StatusNoContent:
			resp.Body.Close()
			if src.Size == 0 {
				sum = adler32.Checksum(nil)
			}
		case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
			loc, lerr := resp.Location()
			drain(resp)
			if lerr != nil {
				return failf(shoal.KindUnavailable, "destination PUT %s answered %s without a usable Location", Redact(u), resp.Status)
			}
			if hop+1 >= maxRedirects {
				return failf(shoal.KindUnavailable, "destination PUT %s: more than %d redirects", Redact(r.Remote), maxRedirects)
			}
			if loc.Scheme != "http" && loc.Scheme != "https" {
				return failf(shoal.KindUnavailable, "destination PUT %s redirects to a %q URL", Redact(u), loc.Scheme)
			}
			u = loc
			continue
		case http.StatusPreconditionFailed:
			drain(resp)
			if !r.Overwrite {
				return failf(shoal.KindPrecondition, "destination %s exists (Overwrite: F)", Redact(r.Remote))
			}
			return failf(shoal.KindPrecondition, "destination PUT %s answered %s", Redact(u), resp.Status)
		default:
			err := statusFailure("destination PUT", resp)
			resp.Body.Close()
			return err
		}
		break
	}
	if sent.n != src.Size || sum != src.Sums.Adler32 {
		c.remove(ctx, r)
		return failf(shoal.KindCorrupt, "the file read here (%d bytes, adler32 %08x) does not match its checksum (%d bytes, adler32 %08x): not pushed", sent.n, sum, src.Size, src.Sums.Adler32)
	}
	size, d, status, err := c.headInfo(ctx, r)
	if err != nil {
		if !r.Verify && headRefused(status) {
			// Nothing to verify against, and nothing said the file is
			// missing: the PUT's 2xx is the word left to take.
			c.log.Info("tpc: destination refused HEAD; push taken on its PUT's answer (RequireChecksumVerification: false)", "remote", Redact(r.Remote), "status", status)
			return nil
		}
		c.remove(ctx, r)
		return err
	}
	if size >= 0 && size != src.Size {
		c.remove(ctx, r)
		return failf(shoal.KindCorrupt, "destination %s has %d bytes after the copy, this file %d", Redact(r.Remote), size, src.Size)
	}
	if !d.comparable(src.Sums) {
		if !r.Verify {
			return nil
		}
		c.remove(ctx, r)
		return failf(shoal.KindCorrupt, "destination %s gives no adler32 or md5 Digest to verify the copy with (RequireChecksumVerification: false copies without)", Redact(r.Remote))
	}
	if m := d.Mismatch(src.Sums); m != "" {
		c.remove(ctx, r)
		return failf(shoal.KindCorrupt, "destination %s: %s", Redact(r.Remote), m)
	}
	return nil
}

// headInfo is the size (-1 unknown) and Digest the destination gives
// for r's remote, and the HEAD's status (0 without an answer).
func (c *Client) headInfo(ctx context.Context, r *Request) (int64, Digest, int, error) {
	req, err := c.newRequest(ctx, http.MethodHead, r.Remote.String(), r)
	if err != nil {
		return -1, Digest{}, 0, failf(shoal.KindInvalid, "%s: %v", Redact(r.Remote), err)
	}
	req.Header.Set("Want-Digest", WantDigest)
	resp, err := c.http.Do(req)
	if err != nil {
		return -1, Digest{}, 0, describe(ctx, "destination HEAD", r.Remote, err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		err := statusFailure("destination HEAD", resp)
		if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone {
			err = failf(shoal.KindNotFound, "%s: the file is not there after its PUT", ReasonOf(err))
		}
		return -1, Digest{}, resp.StatusCode, err
	}
	size := resp.ContentLength
	if v := resp.Header.Get("Content-Length"); size < 0 && v != "" {
		size, _ = strconv.ParseInt(v, 10, 64)
	}
	d, err := ParseDigest(resp.Header.Get("Digest"))
	if err != nil {
		return -1, Digest{}, resp.StatusCode, failf(shoal.KindCorrupt, "destination %s: %v", Redact(r.Remote), err)
	}
	return size, d, resp.StatusCode, nil
}

// headRefused reports whether a destination's HEAD status says it does
// not let the pusher look (a URL pre-signed for PUT alone answers 403, a
// server without HEAD 405 or 501) rather than that the file is missing
// or the server failing: only then may a push without verification
// stand on its PUT's answer.
func headRefused(status int) bool {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusMethodNotAllowed, http.StatusNotImplemented:
		return true
	}
	return false
}

// remove DELETEs a pushed file that failed its checks (best effort).
func (c *Client) remove(ctx context.Context, r *Request) {
	ctx = context.WithoutCancel(ctx)
	req, err := c.newRequest(ctx, http.MethodDelete, r.Remote.String(), r)
	if err != nil {
		return
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.log.Warn("tpc: could not delete a pushed file that failed its check", "remote", Redact(r.Remote), "err", ReasonOf(describe(ctx, "DELETE", r.Remote, err)))
		return
	}
	drain(resp)
}

// drain reads a little of an answer's body (so the connection may be
// reused) and closes it.
func drain(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

// noRedirect is the client of pushes, which follow redirects themselves
// (Go's client turns a 302 to a PUT into a GET).
func (c *Client) noRedirect() *http.Client {
	return c.pushHTTP
}
