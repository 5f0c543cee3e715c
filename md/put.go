package md

import (
	"bytes"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"hash/adler32"
	"io"
	"time"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/dav"
	"shoal/internal/httperr"
	"shoal/internal/netguard"
	"shoal/internal/objhttp"
	"shoal/placement"
	"shoal/wire"
)

var hdrIfNoneMatch = []byte("If-None-Match")

// maxIfMatch bounds the entity-tags of an If-Match kept with an upload.
const maxIfMatch = 16

// putPlan is what md decided about a PUT before touching its body.
type putPlan struct {
	path   string
	exists bool            // a file is being replaced (204 rather than 201)
	cond   shoal.Condition // If-None-Match: * and If-Match, checked again at commit
	length int64           // Content-Length, -1 if chunked
	client string          // who asks, for the bound on pending uploads
	target string          // the data server or gw reserve chose
	as     urlTag          // who the data server's URL is for
	method string          // what the URL is signed for: PUT when empty, a pull's tpc.SignedMethod
	local  *localPlan      // where the body goes on md's own data server; nil: not decided yet
	// proxied: md sends the body on itself (putProxy). reserve then
	// sets commits where the body goes to a data server, which leaves
	// the commit to md (sign.ParamCallerCommits), and upload.
	proxied, commits bool
	upload           string
}

// planPut checks a PUT's headers against the namespace: the parent must be
// a directory (409), the path must not be a directory (409: a file
// operation on a collection), the conditional headers must hold (412), the
// body must fit MaxPutBody (413).
func (s *Server) planPut(ctx *fasthttp.RequestCtx) (*putPlan, error) {
	const op = "PUT"
	path, _, err := requestPath(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.checkWrite(ctx, path, false); err != nil {
		return nil, err
	}
	if err := objhttp.RefusePartial(&ctx.Request.Header, op); err != nil {
		return nil, err
	}
	p := &putPlan{path: path, length: int64(ctx.Request.Header.ContentLength()), client: clientID(ctx), as: urlTagOf(ctx)}
	if p.length < -1 {
		p.length = 0 // identity without length: a request has no body then
	}
	if s.opts.MaxPutBody > 0 && p.length > s.opts.MaxPutBody {
		return nil, tooLarge(op, s.opts.MaxPutBody)
	}
	conds := requestConditions(&ctx.Request.Header)
	if inm := dav.TrimSpace(conds.IfNoneMatch); len(inm) == 1 && inm[0] == '*' || createOnly(ctx) {
		p.cond.CreateOnly = true
	}
	if len(conds.IfMatch) > 0 {
		if _, err := dav.MatchETags(conds.IfMatch, nil, true); err != nil {
			return nil, shoal.E(op, shoal.KindInvalid, err)
		}
		if p.cond.IfMatch = dav.IfMatchList(conds.IfMatch); len(p.cond.IfMatch) > maxIfMatch {
			return nil, shoal.Errorf(op, shoal.KindInvalid, "If-Match lists more than %d entity-tags", maxIfMatch)
		}
	}
	if path == "/" {
		return nil, shoal.Errorf(op, shoal.KindIsDir, "cannot PUT the root")
	}
	if ctx.IsPut() && conds.DecidedInTx() && s.refusedInTx(ctx, p) {
		// (A third-party pull plans as a PUT but creates nothing here: it
		// needs the checks before its source is touched.)
		return p, nil
	}
	parent, err := s.cat.Stat(s.base, shoal.ParentPath(path))
	switch {
	case shoal.IsKind(err, shoal.KindNotFound), shoal.IsKind(err, shoal.KindNotDir):
		return nil, shoal.Errorf(op, shoal.KindConflict, "parent directory does not exist")
	case err != nil:
		return nil, err
	case !parent.IsDir:
		return nil, shoal.Errorf(op, shoal.KindConflict, "parent is not a directory")
	}
	e, err := s.cat.Stat(s.base, path)
	switch {
	case shoal.IsKind(err, shoal.KindNotFound):
		e = nil
	case err != nil:
		return nil, err
	case e.IsDir:
		return nil, shoal.Errorf(op, shoal.KindIsDir, "is a collection")
	case p.cond.CreateOnly:
		return nil, shoal.Errorf(op, shoal.KindPrecondition, "exists (If-None-Match: *)")
	default:
		p.exists = true
	}
	if err := conds.Evaluate(e, false); err != nil {
		return nil, err
	}
	return p, nil
}

// refusedInTx reports whether a PUT whose conditions the catalog decides
// (dav.Conditions.DecidedInTx) is refused, when it must be, by a catalog
// transaction made before its body matters: then planPut need not read
// the parent and the path first (two catalog reads a create, since the
// parent is read again after every create in it, whose mtime changed).
// The transaction checks the parent (409), a directory at the path (409),
// If-None-Match: * and If-Match (412) itself: an inline file's, a staged
// object's commit (for a body of at most stagedUnreadMax that is sent
// without waiting for 100 Continue: the refusal then costs that much
// disk at most), and the reservation (BeginUpload) of a body that goes
// to a data server or gw, made before the 307 or before any byte of it
// is read. An upload into md's own data server that is not staged
// reserves only as its body arrives, so it is planned with the reads.
func (s *Server) refusedInTx(ctx *fasthttp.RequestCtx, p *putPlan) bool {
	if s.inline(p.length) {
		return true
	}
	lp := s.placeLocal(s.base, p)
	if !lp.local {
		return true
	}
	return lp.staged && p.length >= 0 && p.length <= stagedUnreadMax && !ctx.Request.MayContinue()
}

// inline reports whether a body of this length is kept in the catalog.
func (s *Server) inline(length int64) bool {
	return s.opts.InlineMax > 0 && length >= 0 && length <= s.opts.InlineMax
}

// expectHandler runs when a request carries Expect: 100-continue, before
// its body is sent. A PUT that goes to a data server is redirected (307)
// here, so its body is never sent to md, and md never sends 100 Continue
// first; errors (409, 412, 413 …) are answered here too. Everything else
// gets 100 Continue and is handled as usual.
func (s *Server) expectHandler(ctx *fasthttp.RequestCtx) int {
	if !ctx.IsPut() || s.opts.DataMode == DataProxy {
		return fasthttp.StatusContinue
	}
	p, err := s.planPut(ctx)
	if err != nil {
		httperr.Write(ctx, err)
		return ctx.Response.StatusCode()
	}
	if s.inline(p.length) {
		return fasthttp.StatusContinue
	}
	if s.placeLocal(s.base, p).local {
		return fasthttp.StatusContinue // md writes it into its own data server
	}
	u, err := s.reserve(s.base, p)
	if err != nil {
		httperr.Write(ctx, err)
		return ctx.Response.StatusCode()
	}
	ctx.Response.Header.Set("Location", u)
	return fasthttp.StatusTemporaryRedirect
}

// handlePut answers a PUT whose body md may read: inline files are stored
// here; larger ones are redirected (redirect mode) or streamed to a data
// server (proxy and auto modes).
func (s *Server) handlePut(ctx *fasthttp.RequestCtx) {
	p, err := s.planPut(ctx)
	if err != nil {
		objhttp.DrainBody(ctx) // the client gets the status, not a reset
		httperr.Write(ctx, err)
		return
	}
	netguard.BodyIdle(ctx.Conn())
	body := ctx.RequestBodyStream()
	if body == nil {
		body = bytes.NewReader(ctx.Request.Body())
	}
	if s.inline(p.length) {
		// Read into a buffer of the announced size: io.ReadAll would
		// allocate 512 bytes for an empty body, and grow by copies.
		data := make([]byte, p.length)
		if _, err := io.ReadFull(body, data); err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
				err = errors.New("body shorter than Content-Length")
			}
			httperr.Write(ctx, shoal.E("PUT", p.path, shoal.KindInvalid, err))
			return
		}
		s.putInline(ctx, p, data)
		return
	}
	local := s.placeLocal(s.base, p).local
	if s.opts.DataMode == DataRedirect && !local {
		// A client that did not wait for 100 Continue is sending its body
		// to md anyway: up to objhttp.DrainLimit it is read and dropped,
		// so the client gets the 307 (or the error), not a reset.
		objhttp.DrainBody(ctx)
		u, err := s.reserve(s.base, p)
		if err != nil {
			httperr.Write(ctx, err)
			return
		}
		ctx.Response.Header.Set("Location", u)
		ctx.SetStatusCode(fasthttp.StatusTemporaryRedirect)
		return
	}
	if p.length < 0 && s.opts.InlineMax > 0 {
		// Chunked: it may still be small enough to keep inline.
		head, err := io.ReadAll(io.LimitReader(body, s.opts.InlineMax+1))
		if err != nil {
			httperr.Write(ctx, shoal.E("PUT", p.path, shoal.KindInvalid, err))
			return
		}
		if int64(len(head)) <= s.opts.InlineMax {
			s.putInline(ctx, p, head)
			return
		}
		body = io.MultiReader(bytes.NewReader(head), body)
	}
	if p.length < 0 && s.opts.MaxPutBody > 0 {
		body = &limitedBody{r: body, left: s.opts.MaxPutBody, max: s.opts.MaxPutBody}
	}
	if local {
		s.putLocal(ctx, p, body)
		return
	}
	s.putProxy(ctx, p, body)
}

// putInline stores a small file, the whole body in data, in the catalog.
func (s *Server) putInline(ctx *fasthttp.RequestCtx, p *putPlan, data []byte) {
	if data == nil {
		data = []byte{}
	}
	m := md5.Sum(data)
	sums := shoal.Sums{Adler32: adler32.Checksum(data), MD5: m[:]}
	now := time.Now()
	e, err := s.cat.PutInline(s.base, p.path, data, sums, now, p.cond, now.Add(s.opts.URLTTL))
	if err != nil {
		httperr.Write(ctx, asPlanned(err))
		return
	}
	answerWritten(ctx, e)
}

// asPlanned words a commit's refusal of a PUT whose plan skipped the
// reads (an inline or staged file) as planPut would have.
func asPlanned(err error) error {
	if shoal.IsKind(err, shoal.KindIsDir) {
		return shoal.Errorf("PUT", shoal.KindIsDir, "is a collection")
	}
	return err
}

// putProxy streams the body to a data server and relays its answer, which
// it gives only once the data is durable and committed. A server that
// cannot be reached before any byte of the body is read is marked suspect
// and the upload is reserved again on another (its first reservation
// expires unused).
func (s *Server) putProxy(ctx *fasthttp.RequestCtx, p *putPlan, body io.Reader) {
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	counted := &countingReader{r: body}
	p.proxied = true
	for attempt := 0; ; attempt++ {
		u, err := s.reserve(s.base, p)
		if err != nil {
			// Nothing of the body was sent on yet: read and drop it (up
			// to objhttp.DrainLimit) so the client gets this answer, a
			// 507 for a full quota, rather than a broken pipe.
			objhttp.DrainBody(ctx)
			httperr.Write(ctx, err)
			return
		}
		req.Reset()
		resp.Reset()
		req.SetRequestURI(u)
		req.Header.SetMethod(fasthttp.MethodPut)
		req.SetBodyStream(counted, netguard.RequestLength(p.length))
		err = s.client.Do(req, resp)
		if err == nil {
			break
		}
		if placement.Unreachable(err) {
			s.placement.MarkSuspect(p.target)
			if counted.n == 0 && attempt == 0 {
				continue
			}
		}
		objhttp.CloseUnread(ctx)
		if lb, ok := body.(*limitedBody); ok && lb.over {
			httperr.Write(ctx, tooLarge("PUT", lb.max))
			return
		}
		if counted.err != nil {
			httperr.Write(ctx, objhttp.BodyReadError("PUT", counted.err))
			return
		}
		httperr.Write(ctx, shoal.E("PUT", p.path, shoal.KindUnavailable, err))
		return
	}
	status := resp.StatusCode()
	if status >= 300 {
		// The data server's error (or md's, relayed by it), with its kind
		// and reason.
		httperr.Write(ctx, wire.ResponseError("PUT", p.path, status, func(k string) string { return string(resp.Header.Peek(k)) }, resp.Body()))
		return
	}
	if p.commits {
		s.commitProxied(ctx, p, resp.Body())
		return
	}
	ctx.SetStatusCode(status)
	if etag := resp.Header.PeekBytes(hdrETag); len(etag) > 0 {
		ctx.Response.Header.SetBytesKV(hdrETag, etag)
	} else {
		// The data server relays md's commit reply, which has no body (so
		// no ETag) on 204: look the new version up.
		if e, err := s.cat.Stat(s.base, p.path); err == nil {
			setETag(ctx, e)
		}
	}
}

// commitProxied commits the upload of p, whose object the data server
// has made durable and described in its answer (the wire.CommitRequest
// it would have sent md): one HTTP exchange a create fewer than the data
// server committing. If the commit fails, the upload's object goes to
// the garbage queue (at once if refused, else when the upload expires).
func (s *Server) commitProxied(ctx *fasthttp.RequestCtx, p *putPlan, answer []byte) {
	var req wire.CommitRequest
	if err := json.Unmarshal(answer, &req); err != nil || req.Upload != p.upload {
		httperr.Write(ctx, shoal.Errorf("PUT", shoal.KindUnavailable, "the data server answered the upload of %s with no commit", p.path))
		return
	}
	c, err := req.ToCommit()
	if err != nil {
		httperr.Write(ctx, shoal.E("PUT", p.path, shoal.KindUnavailable, err))
		return
	}
	// The object is where the upload reserved it: md does not take the
	// replicas' names from an answer.
	c.Replicas = nil
	now := time.Now()
	if c.MTime.IsZero() {
		c.MTime = now
	}
	e, err := s.cat.FinishUpload(s.base, c, now.Add(s.opts.URLTTL))
	if err != nil {
		httperr.Write(ctx, asPlanned(err))
		return
	}
	answerWritten(ctx, e)
}

// countingReader counts the bytes read through it: a PUT may be sent
// elsewhere only while none was.
type countingReader struct {
	r   io.Reader
	n   int64
	err error // the read that failed: the client's body, not the data server
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += int64(n)
	if err != nil && err != io.EOF {
		c.err = err
	}
	return n, err
}

// limitedBody fails a chunked body that grows past max (md.max_put_body).
type limitedBody struct {
	r    io.Reader
	left int64
	max  int64
	over bool
}

// tooLarge refuses a body over md.max_put_body, naming the limit.
func tooLarge(op string, max int64) error {
	return shoal.Errorf(op, shoal.KindTooLarge, "body larger than %d bytes (md.max_put_body)", max)
}

func (l *limitedBody) Read(b []byte) (int, error) {
	if l.left <= 0 {
		var one [1]byte
		if n, _ := l.r.Read(one[:]); n > 0 {
			l.over = true
			return 0, tooLarge("PUT", l.max)
		}
		return 0, io.EOF
	}
	if int64(len(b)) > l.left {
		b = b[:l.left]
	}
	n, err := l.r.Read(b)
	l.left -= int64(n)
	return n, err
}

// randomHex is a fresh 128-bit id in lower-case hex (object and upload ids).
func randomHex() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b[:])
}

// answerWritten answers a PUT that wrote e: 201 for a new file, 204 for a
// replaced one, with its new ETag.
func answerWritten(ctx *fasthttp.RequestCtx, e *shoal.Entry) {
	setETag(ctx, e)
	if created(e) {
		ctx.SetStatusCode(fasthttp.StatusCreated)
	} else {
		ctx.SetStatusCode(fasthttp.StatusNoContent)
	}
}

func setETag(ctx *fasthttp.RequestCtx, e *shoal.Entry) {
	buf := getBuf()
	buf.b = e.AppendETag(buf.b[:0])
	ctx.Response.Header.SetBytesKV(hdrETag, buf.b)
	putBuf(buf)
}

// created reports whether a file entry just written is new rather than a
// replacement: a replaced file keeps its ID and gets Version+1, a new one
// starts at Version 1 (the catalog's rule; see catalog.putFile).
func created(e *shoal.Entry) bool { return e.Version <= 1 }
