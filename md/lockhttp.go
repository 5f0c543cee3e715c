package md

import (
	"bytes"
	"crypto/md5"
	"encoding/xml"
	"fmt"
	"hash/adler32"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"shoal"
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
	return s.checkLocks(ctx, path, subtree, submittedTokens(lists))
}

// evalIf is true if any list holds: all its conditions (lock token active
// on the resource, entity tag equal to the resource's) hold.
func (s *Server) evalIf(ctx *fasthttp.RequestCtx, path string, lists []ifList) bool {
	for _, l := range lists {
		res := path
		if l.tag != "" {
			res = l.tag
		}
		ok := true
		for _, c := range l.conds {
			var holds bool
			if c.token != "" {
				holds = s.lockActive(c.token, res)
			} else if e, err := s.cat.Stat(s.base, res); err == nil {
				holds = e.ETag() == c.etag || "W/"+e.ETag() == c.etag
			}
			if holds == c.not {
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
			tokens = submittedTokens(lists)
		}
	}
	return s.checkLocks(ctx, dst, true, tokens)
}

// parseTimeout reads "Second-N" or "Infinite" (the first of a list),
// capped at max; def without a usable value.
func parseTimeout(h []byte, def, max time.Duration) time.Duration {
	v := strings.TrimSpace(strings.Split(string(h), ",")[0])
	if n, ok := strings.CutPrefix(v, "Second-"); ok {
		if sec, err := strconv.ParseInt(n, 10, 64); err == nil && sec > 0 {
			if sec < int64(max/time.Second) {
				return time.Duration(sec) * time.Second
			}
			return max
		}
	}
	if strings.EqualFold(v, "Infinite") {
		return max
	}
	return min(def, max)
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
	timeout := parseTimeout(ctx.Request.Header.PeekBytes(hdrTimeout), defaultRequestedTimeout, s.opts.LockTimeout)
	if len(bytes.TrimSpace(body)) == 0 {
		lists, err := parseIf(string(ctx.Request.Header.PeekBytes(hdrIf)))
		if err != nil {
			fail(ctx, op, shoal.KindInvalid, "a lock refresh needs an If header with the lock token")
			return
		}
		err = shoal.Errorf(op, shoal.KindPrecondition, "no such lock on this resource")
		for _, tok := range submittedTokens(lists) {
			var l *shoal.Lock
			if l, err = s.cat.RefreshLock(s.base, tok, path, principalID(ctx), timeout, time.Now()); err == nil {
				s.writeLockReply(ctx, l, fasthttp.StatusOK)
				return
			}
		}
		httperr.Write(ctx, err)
		return
	}
	l, err := parseLockinfo(body)
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	if len(l.Owner) > s.opts.MaxLockOwner {
		fail(ctx, op, shoal.KindInvalid, fmt.Sprintf("lock owner is %d bytes, more than the %d allowed", len(l.Owner), s.opts.MaxLockOwner))
		return
	}
	l.Root, l.Timeout, l.Principal = path, timeout, principalID(ctx)
	switch d := trimSpace(ctx.Request.Header.PeekBytes(hdrDepth)); {
	case len(d) == 0, equalFold(d, "infinity"):
		l.Infinity = true
	case string(d) == "0":
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
	l.Token, l.Expires = newLockToken(), now.Add(l.Timeout)
	if err := s.cat.CreateLock(s.base, l, shoal.LockLimits{PerPrincipal: s.opts.LocksPerPrincipal, Total: s.opts.LocksTotal}, now); err != nil {
		httperr.Write(ctx, err)
		return
	}
	s.lockCount.n.Add(1)
	ctx.Response.Header.SetBytesK(hdrLockToken, "<"+l.Token+">")
	s.writeLockReply(ctx, l, status)
}

// parseLockinfo reads a DAV:lockinfo body: scope, type (write) and owner.
func parseLockinfo(body []byte) (*shoal.Lock, error) {
	const op = "LOCK"
	d, err := openDAVBody(op, body, "lockinfo")
	if err != nil {
		return nil, err
	}
	l := &shoal.Lock{}
	scoped, typed := false, false
	for {
		tok, err := d.Token()
		if err != nil {
			return nil, xmlErr(op, err)
		}
		switch t := tok.(type) {
		case xml.EndElement:
			if !scoped || !typed {
				return nil, shoal.Errorf(op, shoal.KindInvalid, "lockinfo needs lockscope and locktype")
			}
			return l, trailing(d, op)
		case xml.StartElement:
			switch t.Name {
			case xml.Name{Space: nsDAV, Local: "lockscope"}:
				names, err := childNames(d, nil)
				if err != nil || len(names) != 1 || names[0].Space != nsDAV ||
					(names[0].Local != "exclusive" && names[0].Local != "shared") {
					return nil, shoal.Errorf(op, shoal.KindInvalid, "lockscope must be exclusive or shared")
				}
				l.Exclusive, scoped = names[0].Local == "exclusive", true
			case xml.Name{Space: nsDAV, Local: "locktype"}:
				names, err := childNames(d, nil)
				if err != nil || len(names) != 1 || names[0] != (xml.Name{Space: nsDAV, Local: "write"}) {
					return nil, shoal.Errorf(op, shoal.KindInvalid, "locktype must be write")
				}
				typed = true
			case xml.Name{Space: nsDAV, Local: "owner"}:
				v, err := innerXML(d, nil)
				if err != nil {
					return nil, xmlErr(op, err)
				}
				l.Owner = string(v)
			default:
				if err := d.Skip(); err != nil {
					return nil, xmlErr(op, err)
				}
			}
		}
	}
}

func (s *Server) writeLockReply(ctx *fasthttp.RequestCtx, l *shoal.Lock, status int) {
	b := append([]byte(xmlHeader), "<D:prop xmlns:D=\"DAV:\"><D:lockdiscovery>"...)
	b = appendActiveLock(b, l)
	b = append(b, "</D:lockdiscovery></D:prop>\n"...)
	ctx.SetStatusCode(status)
	ctx.Response.Header.SetContentTypeBytes(ctXML)
	ctx.SetBody(b)
}

func appendActiveLock(b []byte, l *shoal.Lock) []byte {
	b = append(b, "<D:activelock><D:locktype><D:write/></D:locktype><D:lockscope>"...)
	if l.Exclusive {
		b = append(b, "<D:exclusive/>"...)
	} else {
		b = append(b, "<D:shared/>"...)
	}
	b = append(b, "</D:lockscope><D:depth>"...)
	if l.Infinity {
		b = append(b, "infinity"...)
	} else {
		b = append(b, '0')
	}
	b = append(b, "</D:depth>"...)
	if l.Owner != "" {
		b = append(b, "<D:owner>"...)
		b = append(b, l.Owner...)
		b = append(b, "</D:owner>"...)
	}
	b = append(b, "<D:timeout>Second-"...)
	b = strconv.AppendInt(b, int64(l.Timeout/time.Second), 10)
	b = append(b, "</D:timeout><D:locktoken><D:href>"...)
	b = appendEscaped(b, l.Token, false)
	b = append(b, "</D:href></D:locktoken><D:lockroot>"...)
	b = appendHref(b, l.Root, false)
	return append(b, "</D:lockroot></D:activelock>"...)
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

const supportedLockXML = "<D:supportedlock><D:lockentry><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry>" +
	"<D:lockentry><D:lockscope><D:shared/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry></D:supportedlock>"

// appendLockProps appends supportedlock or lockdiscovery for path, from
// locks: those of the request's target and below (see liveValues.locks).
func appendLockProps(b []byte, path string, name string, locks []shoal.Lock) []byte {
	if name == "supportedlock" {
		return append(b, supportedLockXML...)
	}
	n := 0
	for i := range locks {
		if locks[i].Covers(path) {
			if n == 0 {
				b = append(b, "<D:lockdiscovery>"...)
			}
			b = appendActiveLock(b, &locks[i])
			n++
		}
	}
	if n == 0 {
		return append(b, "<D:lockdiscovery/>"...)
	}
	return append(b, "</D:lockdiscovery>"...)
}
