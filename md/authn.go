package md

import (
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/auth"
	"shoal/dav"
	"shoal/internal/httperr"
	"shoal/internal/objhttp"
)

// Identity and access in md: every namespace request is admitted before
// its handler runs (and, with Expect: 100-continue, before md answers the
// expectation), so a refusal is decided before any body is read, any 100
// Continue or 307 is sent, and anything changes. Admission authenticates
// the Authorization header (Options.Auth: bearer token, Basic, or
// anonymous) and authorizes the method on its path with what md knows:
// PROPFIND's Depth, a MOVE or COPY destination, and whether a write's
// target exists when that decides (see targetExists). md's internal API
// (wire.Prefix) keeps its own signatures and is never admitted here.

var (
	hdrAuthorization   = []byte("Authorization")
	hdrWWWAuthenticate = []byte("WWW-Authenticate")
)

// reqState is what md learned about a request while admitting it, kept
// as a fasthttp user value for the handler and the access log. States are
// pooled: fasthttp closes user values when it resets the request, which
// puts the state back, so a request costs no allocation for it.
type reqState struct {
	start time.Time
	p     *shoal.Principal
	// path is the clean request path once requestPath parsed it
	// (havePath); requestPath answers from it, so it is parsed once.
	path     string
	trailing bool
	havePath bool
	// createOnly: the principal may create the write's target (a PUT's
	// path, a MOVE or COPY destination) but not replace it, and it was
	// absent when admitted: the handler must not overwrite what appears
	// meanwhile.
	createOnly bool
	// expect: admitted by the Expect handler; the handler, run next for
	// the same request, does not admit it again.
	expect bool
	// logged: the access line is written (the Expect handler answered).
	logged bool
	id     [maxRequestID]byte
	idLen  int
}

type stateKey struct{}

var statePool = sync.Pool{New: func() any { return new(reqState) }}

// Close returns the state to its pool (fasthttp calls it when it resets
// the request).
func (st *reqState) Close() error {
	*st = reqState{}
	statePool.Put(st)
	return nil
}

// stateOf is the request's state, or nil before admission.
func stateOf(ctx *fasthttp.RequestCtx) *reqState {
	st, _ := ctx.UserValue(stateKey{}).(*reqState)
	return st
}

// newState gives the request a fresh state (reusing one left by an
// earlier request on the same ctx that was not reset, as benchmarks do).
func newState(ctx *fasthttp.RequestCtx) *reqState {
	st := stateOf(ctx)
	if st == nil {
		st = statePool.Get().(*reqState)
		ctx.SetUserValue(stateKey{}, st)
	} else {
		*st = reqState{}
	}
	return st
}

// rejectedCredential: the access line's sender of a refused credential (no right).
var rejectedCredential = &shoal.Principal{Kind: shoal.PrincipalAnonymous, ID: "-"}

// principalOf is the request's principal (anonymous before admission or
// without Options.Auth).
func principalOf(ctx *fasthttp.RequestCtx) *shoal.Principal {
	if st := stateOf(ctx); st != nil && st.p != nil {
		return st.p
	}
	return shoal.Anonymous
}

// createOnly reports whether the write must not replace its target (see
// reqState.createOnly).
func createOnly(ctx *fasthttp.RequestCtx) bool {
	st := stateOf(ctx)
	return st != nil && st.createOnly
}

// rememberPath keeps the request's clean path for the rest of it (the
// handler, the access line).
func rememberPath(ctx *fasthttp.RequestCtx, path string, trailing bool) {
	if st := stateOf(ctx); st != nil {
		st.path, st.trailing, st.havePath = path, trailing, true
	}
}

// cachedPath is the clean path admission parsed, if it did.
func cachedPath(ctx *fasthttp.RequestCtx) (string, bool, bool) {
	if st := stateOf(ctx); st != nil && st.havePath {
		return st.path, st.trailing, true
	}
	return "", false, false
}

// admit starts a namespace request: its id, its principal, its
// authorization. It returns false when it has answered the request (401,
// 403, 503), which then must not change anything.
func (s *Server) admit(ctx *fasthttp.RequestCtx) bool {
	return s.admitting(ctx, false)
}

// admitting is admit; expecting says the request waits for 100 Continue,
// so its body is not on its way and must not be read.
func (s *Server) admitting(ctx *fasthttp.RequestCtx, expecting bool) bool {
	if st := stateOf(ctx); st != nil && st.expect {
		st.expect = false // admitted by the Expect handler: this is its body
		return true
	}
	st := newState(ctx)
	if expecting {
		st.start = time.Now() // ctx.Time() is set after the Expect handler
	} else {
		st.start = ctx.Time()
	}
	st.setRequestID(ctx)
	a := s.opts.Auth
	if a == nil {
		st.p = shoal.Anonymous
		return true
	}
	h := ctx.Request.Header.PeekBytes(hdrAuthorization)
	p, err := a.Authenticate(s.base, h, len(h) > 0 && secure(ctx))
	if err != nil {
		st.p = rejectedCredential
		s.refuse(ctx, !expecting, err, err)
		return false
	}
	st.p = p
	if err := s.authorize(ctx, st); err != nil {
		s.refuse(ctx, !expecting, err, nil)
		return false
	}
	return true
}

// secure reports whether the connection may carry a password: TLS, or a
// client on loopback (see auth.Secure).
func secure(ctx *fasthttp.RequestCtx) bool { return auth.Secure(ctx.IsTLS(), ctx.RemoteIP()) }

// refuse answers a refused request: the error, WWW-Authenticate on a 401
// (authErr is the authentication error, if that was the cause), and,
// with drain, a body the client may be sending read and dropped so it gets
// the answer rather than a reset.
func (s *Server) refuse(ctx *fasthttp.RequestCtx, drain bool, err, authErr error) {
	if drain {
		objhttp.DrainBody(ctx)
	}
	httperr.Write(ctx, err)
	if ctx.Response.StatusCode() == fasthttp.StatusUnauthorized {
		for _, c := range s.opts.Auth.Challenges(secure(ctx), authErr) {
			ctx.Response.Header.AddBytesK(hdrWWWAuthenticate, c)
		}
	}
}

// authorize decides the request for its principal. Requests md refuses
// anyway (a malformed path or Destination, an unknown method) are left to
// their handlers, which answer them without changing anything.
func (s *Server) authorize(ctx *fasthttp.RequestCtx, st *reqState) error {
	var r auth.Request
	switch r.Method = dav.Method(ctx.Method()); r.Method {
	case "", "OPTIONS", "POST": // OPTIONS needs nothing; POST and the rest get 405 (or 415)
		return nil
	case "PROPFIND":
		r.Depth = 1
		if d := dav.TrimSpace(ctx.Request.Header.PeekBytes(hdrDepth)); len(d) == 1 && d[0] == '0' {
			r.Depth = 0
		}
	}
	path, _, err := requestPath(ctx) // remembered for the handler
	if err != nil {
		return nil
	}
	r.Path = path
	switch r.Method {
	case "PUT":
		if r.Exists, st.createOnly, err = s.targetExists(st.p, path); err != nil {
			return err
		}
	case "COPY":
		switch r.TPC = s.copyMode(ctx); r.TPC {
		case auth.TPCPull: // like a PUT of the path
			if r.Exists, st.createOnly, err = s.targetExists(st.p, path); err != nil {
				return err
			}
			return s.opts.Auth.Authorize(st.p, &r)
		case auth.TPCPush: // like a GET of the path
			return s.opts.Auth.Authorize(st.p, &r)
		}
		fallthrough
	case "MOVE":
		dst, err := parseDestination(ctx.Request.Header.PeekBytes(hdrDestination))
		if err != nil {
			return nil
		}
		r.Destination = dst
		if r.DestExists, st.createOnly, err = s.targetExists(st.p, dst); err != nil {
			return err
		}
	}
	return s.opts.Auth.Authorize(st.p, &r)
}

// targetExists tells Authorize whether a write's target exists where that
// decides: a principal with modify there may write either way, one with
// neither create nor modify not at all, so only one that may create but
// not modify needs the target looked up. For it the write is createOnly
// when the target is absent.
func (s *Server) targetExists(p *shoal.Principal, path string) (exists, createOnly bool, err error) {
	rights := s.opts.Auth.Rights(p, path)
	if rights.Has(shoal.RightModify) || !rights.Has(shoal.RightCreate) {
		return false, false, nil
	}
	switch _, err := s.cat.Stat(s.base, path); {
	case err == nil:
		return true, false, nil
	case shoal.IsKind(err, shoal.KindNotFound), shoal.IsKind(err, shoal.KindNotDir):
		return false, true, nil
	default:
		return false, false, err
	}
}

// admitExpect is md's Expect handler: a request that waits for 100
// Continue is admitted before md answers it, then goes on to
// expectHandler (a PUT's 307 or refusal). A request answered here is
// logged here: fasthttp does not run the handler for it.
func (s *Server) admitExpect(ctx *fasthttp.RequestCtx) int {
	if !s.admitting(ctx, true) {
		s.answerExpect(ctx)
		return ctx.Response.StatusCode()
	}
	status := s.expectHandler(ctx)
	if status == fasthttp.StatusContinue {
		stateOf(ctx).expect = true
	} else {
		ctx.SetStatusCode(status)
		s.answerExpect(ctx)
	}
	return status
}

// answerExpect finishes a request answered before its body. fasthttp
// then closes the connection with the body unread; a client that did not
// wait for 100 Continue (or waited less than md took) is sending it, and
// a close with bytes unread resets the connection: the client reports
// the reset ("broken pipe"), not the answer. So the close lingers.
func (s *Server) answerExpect(ctx *fasthttp.RequestCtx) {
	objhttp.CloseUnread(ctx)
	s.finish(ctx)
}
