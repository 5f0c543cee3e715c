package md

import (
	"bytes"
	"crypto/md5"
	"fmt"
	"hash/adler32"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/dav"
	"shoal/internal/httperr"
)

var (
	hdrIf        = []byte("If")
	hdrTimeout   = []byte("Timeout")
	hdrLockToken = []byte("Lock-Token")
)

// checkWrite enforces the If header (412 when it evaluates false) and
// locks (423 unless the client submitted the token of every lock on path,
// or below it when subtree is set) before a request changes path.
func (s *Server) checkWrite(ctx *fasthttp.RequestCtx, path string, subtree bool) error {
	h := ctx.Request.Header.PeekBytes(hdrIf)
	if len(h) == 0 {
		return s.checkLocks(ctx, path, subtree, nil)
	}
	lists, err := parseIf(string(h))
	if err != nil {
		return err
	}
	if !s.evalIf(ctx, path, lists) {
		return shoal.Errorf("If", shoal.KindPrecondition, "If header does not match")
	}
	return s.checkLocks(ctx, path, subtree, dav.SubmittedTokens(lists))
}

// evalIf is true if any list holds: all its conditions (lock token active
// on the resource, entity tag equal to the resource's) hold.
func (s *Server) evalIf(ctx *fasthttp.RequestCtx, path string, lists []dav.IfList) bool {
	for _, l := range lists {
		res := path
		if l.Tag != "" {
			res = l.Tag
		}
		ok := true
		for _, c := range l.Conds {
			var holds bool
			if c.Token != "" {
				holds = s.lockActive(c.Token, res)
			} else if e, err := s.cat.Stat(s.base, res); err == nil {
				holds = e.ETag() == c.ETag || "W/"+e.ETag() == c.ETag
			}
			if holds == c.Not {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// checkDestination checks the locks on a MOVE or COPY destination with
// the tokens of the If header (whose conditions apply to the source).
func (s *Server) checkDestination(ctx *fasthttp.RequestCtx, dst string) error {
	var tokens []string
	if h := ctx.Request.Header.PeekBytes(hdrIf); len(h) > 0 {
		if lists, err := parseIf(string(h)); err == nil {
			tokens = dav.SubmittedTokens(lists)
		}
	}
	return s.checkLocks(ctx, dst, true, tokens)
}

// parseIf is dav.ParseIf refusing a resource tag under wire.Prefix, as
// a Destination there is refused.
func parseIf(h string) ([]dav.IfList, error) {
	lists, err := dav.ParseIf(h)
	if err != nil {
		return nil, err
	}
	for _, l := range lists {
		if isInternal(l.Tag) {
			return nil, dav.ErrMalformedIf
		}
	}
	return lists, nil
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
	timeout := dav.ParseTimeout(ctx.Request.Header.PeekBytes(hdrTimeout), defaultRequestedTimeout, s.opts.LockTimeout)
	if len(bytes.TrimSpace(body)) == 0 {
		lists, err := parseIf(string(ctx.Request.Header.PeekBytes(hdrIf)))
		if err != nil {
			fail(ctx, op, shoal.KindInvalid, "a lock refresh needs an If header with the lock token")
			return
		}
		err = shoal.Errorf(op, shoal.KindPrecondition, "no such lock on this resource")
		for _, tok := range dav.SubmittedTokens(lists) {
			var l *shoal.Lock
			if l, err = s.cat.RefreshLock(s.base, tok, path, principalID(ctx), timeout, time.Now()); err == nil {
				s.writeLockReply(ctx, l, fasthttp.StatusOK)
				return
			}
		}
		httperr.Write(ctx, err)
		return
	}
	l, err := dav.ParseLockinfo(body)
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	if len(l.Owner) > s.opts.MaxLockOwner {
		fail(ctx, op, shoal.KindInvalid, fmt.Sprintf("lock owner is %d bytes, more than the %d allowed", len(l.Owner), s.opts.MaxLockOwner))
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
		lists, err := parseIf(string(h))
		if err != nil {
			httperr.Write(ctx, err)
			return
		}
		if !s.evalIf(ctx, path, lists) {
			fail(ctx, op, shoal.KindPrecondition, "If header does not match")
			return
		}
	}
	status := fasthttp.StatusOK
	if _, err := s.cat.Stat(s.base, path); shoal.IsKind(err, shoal.KindNotFound) {
		if err := s.checkLocks(ctx, path, false, nil); err != nil {
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
	now := time.Now()
	l.Token, l.Expires = dav.NewLockToken(), now.Add(l.Timeout)
	if err := s.cat.CreateLock(s.base, l, shoal.LockLimits{PerPrincipal: s.opts.LocksPerPrincipal, Total: s.opts.LocksTotal}, now); err != nil {
		httperr.Write(ctx, err)
		return
	}
	s.lockCount.n.Add(1)
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
	const op = "UNLOCK"
	path, _, err := requestPath(ctx)
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	tok := strings.TrimSpace(string(ctx.Request.Header.PeekBytes(hdrLockToken)))
	if len(tok) < 3 || tok[0] != '<' || tok[len(tok)-1] != '>' {
		fail(ctx, op, shoal.KindInvalid, "missing or malformed Lock-Token header")
		return
	}
	if err := s.cat.Unlock(s.base, tok[1:len(tok)-1], path, principalID(ctx), time.Now()); err != nil {
		if shoal.IsKind(err, shoal.KindConflict) {
			err = shoal.Errorf(op, shoal.KindConflict, "lock token does not match a lock on this resource")
		}
		httperr.Write(ctx, err)
		return
	}
	ctx.SetStatusCode(fasthttp.StatusNoContent)
}
