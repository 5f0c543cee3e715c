package md

import (
	"log/slog"
	"net/url"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/auth"
	"shoal/internal/httperr"
	"shoal/tpc"
)

// Third-party copy (WLCG HTTP-TPC) in md. A COPY with Source pulls the
// source into the request's path; a COPY whose Destination names another
// server pushes the request's file there (a Destination on md's own host
// and port, or a path, is the plain WebDAV COPY it always was). md
// authorizes it at admission (pull as a PUT of the path, push as a GET),
// checks the namespace (parent, Overwrite, conditions, locks), reserves
// the upload of a pull from the source's size (a HEAD through the guard),
// and answers 307 to the server that will move the bytes — a data server
// for replica:1, a gw otherwise — with a URL signed for this copy alone
// (tpc.SignedMethod). That server answers 202 and the marker stream. In
// proxy mode, and for files kept in the catalog, md moves the bytes
// itself (tpc_here.go).

// copyRequest reads a COPY's third-party headers: nil for a plain COPY.
func (s *Server) copyRequest(ctx *fasthttp.RequestCtx) (*tpc.Request, error) {
	return tpc.Parse(tpc.HeadersOf(&ctx.Request.Header), func(u *url.URL) bool {
		return tpc.IsLocal(u, string(ctx.Host()), s.local)
	})
}

// copyMode is what admission authorizes a COPY as (a malformed one is
// left to the handler, which refuses it).
func (s *Server) copyMode(ctx *fasthttp.RequestCtx) auth.TPC {
	r, err := s.copyRequest(ctx)
	switch {
	case err != nil || r == nil:
		return auth.TPCNone
	case r.Mode == tpc.ModePull:
		return auth.TPCPull
	}
	return auth.TPCPush
}

// foreignDestination reports whether a MOVE names another server.
func (s *Server) foreignDestination(ctx *fasthttp.RequestCtx) bool {
	r, err := s.copyRequest(ctx)
	return err == nil && r != nil && r.Mode == tpc.ModePush
}

// handleCopy answers COPY: a third-party copy, or the local one.
func (s *Server) handleCopy(ctx *fasthttp.RequestCtx) {
	r, err := s.copyRequest(ctx)
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	if r == nil {
		s.handleMoveCopy(ctx, false)
		return
	}
	if s.opts.TPC == nil {
		fail(ctx, "COPY", shoal.KindNotAllowed, "third-party copy is not enabled on this server")
		return
	}
	if r.Mode == tpc.ModePull {
		s.tpcPull(ctx, r)
		return
	}
	s.tpcPush(ctx, r)
}

// tpcPull checks a pull into the request's path as a PUT of it, learns
// the source's size and sends the client to the server that will fetch
// it (or fetches it here).
func (s *Server) tpcPull(ctx *fasthttp.RequestCtx, r *tpc.Request) {
	p, err := s.planPut(ctx)
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	if !r.Overwrite {
		if p.exists {
			fail(ctx, "COPY", shoal.KindPrecondition, "destination exists (Overwrite: F)")
			return
		}
		p.cond.CreateOnly = true // and stays so at commit
	}
	size, err := s.opts.TPC.Stat(s.base, r)
	if err != nil {
		if tpc.Refused(err) || shoal.IsKind(err, shoal.KindNotFound) {
			s.opts.TPC.Fail(ctx, tpc.ModePull, r.Remote, err)
			return
		}
		size = -1 // a source that answers GET only (a URL pre-signed for GET): its GET tells
	}
	if s.opts.MaxPutBody > 0 && size > s.opts.MaxPutBody {
		s.opts.TPC.Fail(ctx, tpc.ModePull, r.Remote, shoal.Errorf("COPY", shoal.KindTooLarge, "the source has %d bytes, more than the %d a file may have here", size, s.opts.MaxPutBody))
		return
	}
	p.length = size
	if !s.tpcRedirects() {
		s.pullHere(ctx, r, p)
		return
	}
	p.method = tpc.SignedMethod(tpc.ModePull, r.Remote, size, "")
	u, err := s.reserve(s.base, p)
	if err != nil {
		if k := shoal.KindOf(err); k == shoal.KindInsufficient || k == shoal.KindQuota {
			s.opts.TPC.Fail(ctx, tpc.ModePull, r.Remote, err)
			return
		}
		httperr.Write(ctx, err)
		return
	}
	ctx.Response.Header.SetBytesKV(hdrLocation, []byte(u+"&"+tpc.Query(size, "")))
	ctx.SetStatusCode(fasthttp.StatusTemporaryRedirect)
}

// tpcPush checks a push of the request's file as a GET of it and sends
// the client to a server holding it (or pushes it from here: files kept
// in the catalog, proxy mode).
func (s *Server) tpcPush(ctx *fasthttp.RequestCtx, r *tpc.Request) {
	path, _, err := requestPath(ctx)
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	if h := ctx.Request.Header.PeekBytes(hdrIf); len(h) > 0 {
		err = s.checkWrite(ctx, path, false) // COPY reads: only the If conditions apply
	}
	if err == nil {
		err = s.checkConditions(ctx, path)
	}
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	e, err := s.stat(ctx, path)
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	if e.IsDir {
		fail(ctx, "COPY", shoal.KindIsDir, "a third-party copy copies files, not collections")
		return
	}
	if !r.Overwrite {
		switch exists, err := s.opts.TPC.Exists(s.base, r); {
		case exists:
			fail(ctx, "COPY", shoal.KindPrecondition, "destination exists (Overwrite: F)")
			return
		case tpc.Refused(err):
			s.opts.TPC.Fail(ctx, tpc.ModePush, r.Remote, err)
			return
		} // otherwise the PUT's If-None-Match: * decides
	}
	if e.Inline != nil || e.Size == 0 || !s.tpcRedirects() {
		s.pushHere(ctx, r, e)
		return
	}
	sums := tpc.FormatSums(e.Sums)
	targets, err := s.readTargetsFor(s.base, e, urlTagOf(ctx), tpc.SignedMethod(tpc.ModePush, r.Remote, e.Size, sums))
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	ctx.Response.Header.SetBytesKV(hdrLocation, []byte(targets[0].url+"&"+tpc.Query(e.Size, sums)))
	ctx.SetStatusCode(fasthttp.StatusTemporaryRedirect)
}

// tpcRedirects reports whether md sends third-party copies to the server
// that moves the bytes: always but in proxy mode. Not by User-Agent, as
// GETs in auto mode: the clients of third-party copies (davix, gfal2,
// FTS, curl -L) follow a COPY's 307, and davix names neon in its
// User-Agent.
func (s *Server) tpcRedirects() bool { return s.opts.DataMode != DataProxy }

// tpcAudit is what an audit line of a third-party COPY says of the other
// side (its URL without the query, where a pre-signed URL keeps its
// credentials).
func (s *Server) tpcAudit(ctx *fasthttp.RequestCtx) (slog.Attr, bool) {
	r, err := s.copyRequest(ctx)
	if err != nil || r == nil {
		return slog.Attr{}, false
	}
	if r.Mode == tpc.ModePull {
		return slog.String("source", tpc.Redact(r.Remote)), true
	}
	return slog.String("destination", tpc.Redact(r.Remote)), true
}

// serverHosts are the hosts of every data server and gw md knows: the
// guard refuses copies to and from them.
func (s *Server) serverHosts() []string { return s.placement.Hosts(s.base) }
