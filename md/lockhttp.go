package md

import (
	"bytes"
	"crypto/md5"
	"hash/adler32"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/dav"
	"shoal/internal/httperr"
)

// WebDAV locks (RFC 4918 class 2): md answers LOCK and UNLOCK and asks
// its davlock.Manager (the locks live in the catalog, shared by every md)
// before every write.

var (
	hdrIf        = []byte("If")
	hdrTimeout   = []byte("Timeout")
	hdrLockToken = []byte("Lock-Token")
)

// principalID is who a request acts as, for lock ownership (see
// authn.go; requests without authentication act as shoal.Anonymous).
func principalID(ctx *fasthttp.RequestCtx) string { return principalOf(ctx).ID }

// clientID is who a request comes from, for per-client limits: its
// principal, or its address when anonymous.
func clientID(ctx *fasthttp.RequestCtx) string {
	return shoal.ClientOf(principalID(ctx), ctx.RemoteIP().String())
}

// checkWrite enforces the If header (412 when it evaluates false) and
// locks (423 unless the client submitted the token of every lock on path,
// or below it when subtree is set) before a request changes path.
func (s *Server) checkWrite(ctx *fasthttp.RequestCtx, path string, subtree bool) error {
	return s.locks.CheckWrite(principalID(ctx), path, subtree, ctx.Request.Header.PeekBytes(hdrIf))
}

// checkDestination checks the locks on a MOVE or COPY destination with
// the tokens of the If header (whose conditions apply to the source).
func (s *Server) checkDestination(ctx *fasthttp.RequestCtx, dst string) error {
	return s.locks.CheckDestination(principalID(ctx), dst, ctx.Request.Header.PeekBytes(hdrIf))
}

// handleLock creates a lock (lockinfo body) or refreshes one (no body,
// If header naming it). LOCK on an unmapped path creates an empty file
// (RFC 4918 9.10.4), 201.
func (s *Server) handleLock(ctx *fasthttp.RequestCtx) {
	const op = "LOCK"
	path, _, err := requestPath(ctx)
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	body, err := s.readXMLBody(ctx, op)
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	timeout := s.locks.Timeout(ctx.Request.Header.PeekBytes(hdrTimeout))
	if len(bytes.TrimSpace(body)) == 0 {
		l, err := s.locks.Refresh(principalID(ctx), path, ctx.Request.Header.PeekBytes(hdrIf), timeout)
		if err != nil {
			httperr.Write(ctx, err)
			return
		}
		s.writeLockReply(ctx, l, fasthttp.StatusOK)
		return
	}
	l, err := dav.ParseLockinfo(body)
	if err == nil {
		err = s.locks.CheckOwner(l)
	}
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	l.Root, l.Timeout, l.Principal = path, timeout, principalID(ctx)
	switch d, ok := dav.ParseDepth(ctx.Request.Header.PeekBytes(hdrDepth)); {
	case ok && d == dav.DepthInfinity:
		l.Infinity = true
	case ok && d == 0:
	default:
		fail(ctx, op, shoal.KindInvalid, "Depth must be 0 or infinity on LOCK")
		return
	}
	if h := ctx.Request.Header.PeekBytes(hdrIf); len(h) > 0 {
		if err := s.locks.CheckIf(path, h); err != nil {
			httperr.Write(ctx, err)
			return
		}
	}
	status := fasthttp.StatusOK
	if _, err := s.cat.Stat(s.base, path); shoal.IsKind(err, shoal.KindNotFound) {
		if err := s.locks.Check(principalID(ctx), path, false, nil); err != nil {
			httperr.Write(ctx, err)
			return
		}
		m := md5.Sum(nil)
		now := time.Now()
		_, err := s.cat.PutInline(s.base, path, []byte{}, shoal.Sums{Adler32: adler32.Checksum(nil), MD5: m[:]}, now, shoal.Condition{CreateOnly: true}, now.Add(s.opts.URLTTL))
		if err != nil && !shoal.IsKind(err, shoal.KindPrecondition) {
			if shoal.IsKind(err, shoal.KindNotDir) {
				err = shoal.Errorf(op, shoal.KindConflict, "parent is not a collection")
			}
			httperr.Write(ctx, err)
			return
		}
		status = fasthttp.StatusCreated
	} else if err != nil {
		httperr.Write(ctx, err)
		return
	}
	if err := s.locks.Create(l); err != nil {
		httperr.Write(ctx, err)
		return
	}
	ctx.Response.Header.SetBytesK(hdrLockToken, "<"+l.Token+">")
	s.writeLockReply(ctx, l, status)
}

func (s *Server) writeLockReply(ctx *fasthttp.RequestCtx, l *shoal.Lock, status int) {
	ctx.SetStatusCode(status)
	ctx.Response.Header.SetContentTypeBytes(dav.ContentTypeXML)
	ctx.SetBody(dav.AppendLockReply(nil, l))
}

// handleUnlock removes the lock named by the Lock-Token header: 204; 400
// without the header; 409 if it names no lock on this resource.
func (s *Server) handleUnlock(ctx *fasthttp.RequestCtx) {
	path, _, err := requestPath(ctx)
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	tok := strings.TrimSpace(string(ctx.Request.Header.PeekBytes(hdrLockToken)))
	if len(tok) < 3 || tok[0] != '<' || tok[len(tok)-1] != '>' {
		fail(ctx, "UNLOCK", shoal.KindInvalid, "missing or malformed Lock-Token header")
		return
	}
	if err := s.locks.Unlock(principalID(ctx), path, tok[1:len(tok)-1]); err != nil {
		httperr.Write(ctx, err)
		return
	}
	ctx.SetStatusCode(fasthttp.StatusNoContent)
}
