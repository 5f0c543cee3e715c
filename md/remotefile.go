package md

import (
	"io"
	"strconv"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/placement"
	"shoal/wire"
)

// proxyWindow is the most md asks of a data server (or gw) in one answer
// when it relays a file: under 2 GiB, because md's HTTP client keeps an
// answer's Content-Length in a native int, 32 bits on linux/arm, where a
// file of 2 GiB or more could not be relayed at all. A variable so that
// tests can cross windows with small files.
var proxyWindow int64 = 1 << 30

// remoteFile is a file of the catalog read from its data servers (or
// gws), as a shoal.Object: one Range GET of at most proxyWindow bytes at
// a time, from the first target that answers, signed when it is opened
// (a transfer may outlive a URL's lifetime); a read that continues where
// the last one stopped continues the open answer.
type remoteFile struct {
	s    *Server
	e    *shoal.Entry
	as   urlTag
	op   string             // GET, or COPY for a push's source
	resp *fasthttp.Response // the open window, nil when none
	pos  int64              // the offset the open window reads next
	end  int64              // the end of the open window
}

func (s *Server) remoteFile(e *shoal.Entry, as urlTag, op string) *remoteFile {
	return &remoteFile{s: s, e: e, as: as, op: op}
}

func (f *remoteFile) Size() int64 { return f.e.Size }

func (f *remoteFile) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) {
		if off >= f.e.Size {
			return n, io.EOF
		}
		if f.resp == nil || off != f.pos {
			if err := f.open(off); err != nil {
				return n, err
			}
		}
		m, err := f.resp.BodyStream().Read(p[n:min(len(p), n+int(f.end-f.pos))])
		n, off, f.pos = n+m, off+int64(m), f.pos+int64(m)
		switch {
		case f.pos == f.end:
			f.close() // the next read opens the next window
		case err == io.EOF:
			f.close()
			return n, shoal.Errorf(f.op, shoal.KindUnavailable, "%s: answer ended %d bytes short", f.e.Path, f.end-f.pos)
		case err != nil:
			f.close()
			return n, shoal.E(f.op, f.e.Path, shoal.KindUnavailable, err)
		}
	}
	return n, nil
}

// open closes any open window and opens the one starting at off. A target
// that cannot be reached (marked suspect, so that md stops choosing it),
// answers 5xx or answers other bytes than asked is skipped for the next; a
// 4xx is the file's own error, returned at once.
func (f *remoteFile) open(off int64) error {
	f.close()
	targets, err := f.s.readTargets(f.s.base, f.e, f.as)
	if err != nil {
		return err
	}
	end := min(off+proxyWindow, f.e.Size)
	span := strconv.FormatInt(off, 10) + "-" + strconv.FormatInt(end-1, 10)
	want := "bytes " + span + "/" + strconv.FormatInt(f.e.Size, 10) // the Content-Range of the answer
	req := fasthttp.AcquireRequest()
	defer fasthttp.ReleaseRequest(req)
	for _, t := range targets {
		req.Reset()
		req.SetRequestURI(t.url)
		req.Header.SetMethod(fasthttp.MethodGet)
		req.Header.Set(fasthttp.HeaderRange, "bytes="+span)
		resp := fasthttp.AcquireResponse()
		err = f.s.client.Do(req, resp)
		if err != nil {
			if placement.Unreachable(err) {
				f.s.placement.MarkSuspect(t.server)
			}
			fasthttp.ReleaseResponse(resp)
			err = shoal.E(f.op, f.e.Path, shoal.KindUnavailable, err)
			continue
		}
		status := resp.StatusCode()
		if status == fasthttp.StatusPartialContent && int64(resp.Header.ContentLength()) == end-off &&
			string(resp.Header.Peek(fasthttp.HeaderContentRange)) == want {
			f.resp, f.pos, f.end = resp, off, end
			return nil
		}
		if status < 300 {
			err = shoal.Errorf(f.op, shoal.KindUnavailable, "%s: bytes %s answered %d %q", f.e.Path, span, status, resp.Header.Peek(fasthttp.HeaderContentRange))
		} else {
			body, _ := io.ReadAll(io.LimitReader(resp.BodyStream(), 4096))
			err = wire.ResponseError(f.op, f.e.Path, status, func(k string) string { return string(resp.Header.Peek(k)) }, body)
		}
		resp.CloseBodyStream()
		fasthttp.ReleaseResponse(resp)
		if status >= 300 && status < 500 {
			return err
		}
	}
	return err
}

func (f *remoteFile) close() {
	if f.resp != nil {
		f.resp.CloseBodyStream()
		fasthttp.ReleaseResponse(f.resp)
		f.resp = nil
	}
}

// Close ends the open window; fasthttp closes a body after sending it.
func (f *remoteFile) Close() error {
	f.close()
	return nil
}
