package md

import (
	"bytes"
	"context"
	"io"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/internal/netguard"
	"shoal/placement"
	"shoal/tpc"
	"shoal/wire"
)

// md moves the bytes of a third-party copy itself in proxy mode, and
// pushes the files it keeps in the catalog. A pull streams the source into an ordinary proxied upload,
// which the data server commits when the body ends: tpc.Pull checksums
// the body on its way and holds back its last byte until the source's
// digest matched, so a mismatch or a cut source leaves nothing visible.

// pullHere pulls r's source into p's path through a data server.
func (s *Server) pullHere(ctx *fasthttp.RequestCtx, r *tpc.Request, p *putPlan) {
	sink := tpc.Sink{Store: func(_ context.Context, body io.Reader, size int64) (shoal.Sums, error) {
		p.length = size
		if max := s.opts.MaxPutBody; max > 0 {
			if size > max {
				return shoal.Sums{}, shoal.Errorf("COPY", shoal.KindTooLarge, "the source has %d bytes, more than the %d a file may have here", size, max)
			}
			if size < 0 {
				body = &limitedBody{r: body, left: max, max: max}
			}
		}
		return shoal.Sums{}, s.putTo(p, body)
	}}
	s.opts.TPC.Serve(ctx, tpc.ModePull, r.Remote, func(c context.Context, prog *tpc.Progress) error {
		return s.opts.TPC.Pull(c, r, sink, prog)
	})
}

// putTo streams body to a data server (or gw) as p's upload, which it
// commits once body ended; an error leaves nothing visible.
func (s *Server) putTo(p *putPlan, body io.Reader) error {
	u, err := s.reserve(s.base, p)
	if err != nil {
		return err
	}
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(u)
	req.Header.SetMethod(fasthttp.MethodPut)
	req.SetBodyStream(body, netguard.RequestLength(p.length))
	if err := s.client.Do(req, resp); err != nil {
		if placement.Unreachable(err) {
			s.placement.MarkSuspect(p.target)
		}
		return shoal.E("COPY", p.path, shoal.KindUnavailable, err)
	}
	if status := resp.StatusCode(); status >= 300 {
		return wire.ResponseError("COPY", p.path, status, func(k string) string { return string(resp.Header.Peek(k)) }, resp.Body())
	}
	return nil
}

// pushHere pushes file e from here: from the catalog for a file kept
// there, else read from a data server (or gw) as a proxied GET.
func (s *Server) pushHere(ctx *fasthttp.RequestCtx, r *tpc.Request, e *shoal.Entry) {
	as := urlTagOf(ctx)
	src := tpc.Source{Size: e.Size, Sums: e.Sums, Open: func(context.Context) (io.ReadCloser, error) {
		if e.Inline != nil || e.Size == 0 {
			return io.NopCloser(bytes.NewReader(e.Inline)), nil
		}
		return s.openFile(e, as)
	}}
	s.opts.TPC.Serve(ctx, tpc.ModePush, r.Remote, func(c context.Context, prog *tpc.Progress) error {
		return s.opts.TPC.Push(c, r, src, prog)
	})
}

// openFile reads file e from its data servers, as getProxy does.
func (s *Server) openFile(e *shoal.Entry, as urlTag) (io.ReadCloser, error) {
	f := s.remoteFile(e, as, "COPY")
	if err := f.open(0); err != nil {
		return nil, err
	}
	return struct {
		io.Reader
		io.Closer
	}{io.NewSectionReader(f, 0, e.Size), f}, nil
}
