package objhttp

import (
	"crypto/md5"
	"encoding/base64"
	"errors"
	"io"
	"net"
	"os"
	"strconv"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/internal/httperr"
	"shoal/internal/netguard"
	"shoal/wire"
)

// SetSums sets a PUT answer's Digest and X-Shoal-Size headers.
func SetSums(ctx *fasthttp.RequestCtx, size int64, sums shoal.Sums) {
	d := "adler32=" + wire.FormatAdler32(sums.Adler32)
	if len(sums.MD5) == md5.Size {
		d += ",md5=" + base64.StdEncoding.EncodeToString(sums.MD5)
	}
	ctx.Response.Header.Set(wire.HeaderDigest, d)
	ctx.Response.Header.Set(wire.HeaderSize, strconv.FormatInt(size, 10))
}

// Body reads a PUT body and fails with KindInvalid if it ends before its
// Content-Length (Want < 0: chunked, no check), so a client that dies
// half-way never leaves a short object, and with KindTooLarge past Max.
type Body struct {
	R    io.Reader // the request body stream; nil reads as empty
	Want int64     // Content-Length; < 0 for chunked
	Max  int64     // the body limit
	Op   string    // the operation named in errors
	// Reserved says that Max is the bound md signed into the URL (what it
	// reserved for the upload) rather than the server's own limit.
	Reserved bool

	Got int64 // bytes read so far
	// Failed: reading the body broke (client gone, bad chunking).
	Failed bool
}

func (b *Body) Read(p []byte) (int, error) {
	if b.R == nil {
		return 0, io.EOF
	}
	n, err := b.R.Read(p)
	b.Got += int64(n)
	if b.Got > b.Max {
		b.Failed = true // the rest is not read
		if b.Reserved {
			return n, shoal.Errorf(b.Op, shoal.KindTooLarge, "body over the %d bytes reserved for this upload (its Content-Length, md.chunked_reserve or the room left in its quota)", b.Max)
		}
		return n, shoal.Errorf(b.Op, shoal.KindTooLarge, "body over the limit of %d bytes", b.Max)
	}
	if err == io.EOF && b.Want >= 0 && b.Got != b.Want {
		return n, shoal.Errorf(b.Op, shoal.KindInvalid, "body ended after %d of %d bytes: %w", b.Got, b.Want, io.ErrUnexpectedEOF)
	}
	if err != nil && err != io.EOF {
		b.Failed = true
		if shoal.IsKind(err, shoal.KindTooLarge) {
			return n, err // a bound below b's (md's max_put_body on a chunked body)
		}
		return n, BodyReadError(b.Op, err)
	}
	return n, err
}

// BodyReadError is the error of a request body whose read failed: 408
// when the client sent nothing for the read idle limit (it was a 400, and
// through md's proxy a 503 with Retry-After, as if a server were down),
// 400 otherwise (the client gone, bad chunking).
func BodyReadError(op string, err error) error {
	var ne net.Error
	if errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return shoal.Errorf(op, shoal.KindTimeout, "the request body stopped coming: %v", err)
	}
	return shoal.Errorf(op, shoal.KindInvalid, "reading body: %w", err)
}

// DrainLimit is how much of a refused PUT body a data server reads and
// discards before answering: a client still sending its body when the
// server closes gets a connection reset instead of the status (seen with
// Go's client under emulation). Bigger bodies are cut off with the close.
const DrainLimit = 64 << 20

// DrainRest reads and drops what is left of b, up to DrainLimit, after
// the server failed to store it (a duplicate id, a shard server gone, a
// full disk): the client, still sending, then gets the answer rather
// than a reset. A body that failed itself (the client's fault, or over
// its bound) or has more than DrainLimit left closes the connection.
func DrainRest(ctx *fasthttp.RequestCtx, b *Body) {
	if b.Failed || b.Want-b.Got > DrainLimit {
		CloseUnread(ctx)
		return
	}
	if n, _ := io.CopyN(io.Discard, b.R, DrainLimit); n == DrainLimit {
		CloseUnread(ctx)
	}
}

// CheckSize refuses a PUT whose Content-Length is over max (fasthttp does
// not enforce its limit on streamed bodies), or over reserved, the bound
// of its signed URL (sign.ParamMax; < 0: none), and otherwise returns the
// body reader, which stops a longer (chunked) body at the lower of the
// two. When it returns false it has answered 413; a body up to DrainLimit
// is read and discarded first, a bigger one is left unread and the
// connection closed.
func CheckSize(ctx *fasthttp.RequestCtx, op string, max, reserved int64) (*Body, bool) {
	if err := RefusePartial(&ctx.Request.Header, op); err != nil {
		DrainBody(ctx)
		httperr.Write(ctx, err)
		return nil, false
	}
	want := int64(ctx.Request.Header.ContentLength())
	if want > max {
		DrainBody(ctx)
		httperr.Write(ctx, shoal.Errorf(op, shoal.KindTooLarge, "body of %d bytes over the limit of %d", want, max))
		return nil, false
	}
	if reserved >= 0 && want > reserved {
		DrainBody(ctx)
		httperr.Write(ctx, shoal.Errorf(op, shoal.KindTooLarge, "body of %d bytes over the %d reserved for this upload", want, reserved))
		return nil, false
	}
	netguard.BodyIdle(ctx.Conn())
	b := &Body{R: ctx.RequestBodyStream(), Want: want, Max: max, Op: op}
	b.Reserve(reserved)
	return b, true
}

// RefusePartial refuses a PUT with a Content-Range: a partial update,
// which shoal does not do (an object is written whole, once). Stored as
// the whole file, the part would replace it (RFC 9110 §14.5: 400).
func RefusePartial(h *fasthttp.RequestHeader, op string) error {
	if len(h.Peek(fasthttp.HeaderContentRange)) > 0 {
		return shoal.Errorf(op, shoal.KindInvalid, "Content-Range on a PUT: partial updates are not supported, send the whole file")
	}
	return nil
}

// Reserve bounds b by what md reserved for its upload, where that is
// below b's own limit; NoLimit (negative) leaves b as it is.
func (b *Body) Reserve(reserved int64) {
	if reserved >= 0 && reserved < b.Max {
		b.Max, b.Reserved = reserved, true
	}
}

// DrainBody reads and discards the body of a request answered without it
// (refused, or redirected elsewhere) when it is at most DrainLimit, so a
// client still sending it gets the answer rather than a reset; a bigger
// one is left unread and the connection closed after the answer.
func DrainBody(ctx *fasthttp.RequestCtx) {
	r := ctx.RequestBodyStream()
	if r == nil {
		return // read already (not streamed)
	}
	want := int64(ctx.Request.Header.ContentLength())
	switch {
	case want > DrainLimit:
		CloseUnread(ctx)
	case want >= 0:
		if n, _ := io.CopyN(io.Discard, r, want); n < want {
			CloseUnread(ctx)
		}
	default: // chunked: read to its end if that comes soon enough
		if _, err := io.CopyN(io.Discard, r, DrainLimit+1); err != io.EOF {
			CloseUnread(ctx)
		}
	}
}

// CloseUnread closes the connection after the answer to a request whose
// body is left unread, gently (netguard.Linger): the client, still
// sending it, reads the answer instead of a reset.
func CloseUnread(ctx *fasthttp.RequestCtx) {
	ctx.SetConnectionClose()
	netguard.Linger(ctx.Conn())
}

// Commit sends a finished upload's commit to md and answers the PUT with
// md's status and ETag. If md refuses or cannot be reached, undo removes
// what was stored, and the client gets md's own answer (its kind, so its
// status, and its reason text) or 503.
func Commit(ctx *fasthttp.RequestCtx, md *wire.Client, op, id string, req wire.CommitRequest, undo func()) {
	reply, status, err := CommitCall(md, op, req)
	if err != nil {
		undo()
		if status >= 400 {
			httperr.Write(ctx, err) // md's answer: its kind (so status) and reason
			return
		}
		httperr.Write(ctx, shoal.E(op, id, shoal.KindUnavailable, err))
		return
	}
	if reply.ETag != "" {
		ctx.Response.Header.Set(fasthttp.HeaderETag, reply.ETag)
	}
	ctx.SetStatusCode(status)
}

// Abort tells md that upload failed here (its body was refused, cut or
// lost), so that md gives back what the upload reserved at once instead of
// at its expiry. Best effort: a failure is logged by logf and the expiry
// does it later.
func Abort(md *wire.Client, upload string, logf func(msg string, args ...any)) {
	if md == nil || upload == "" {
		return
	}
	if _, err := md.Call(wire.PathAbort, wire.AbortRequest{Upload: upload}, nil); err != nil && !shoal.IsKind(err, shoal.KindNotFound) {
		logf("telling md an upload failed", "upload", upload, "err", err)
	}
}

// CommitCall sends a finished upload's commit to md: md's reply and
// status (201 new, 204 replaced), or md's refusal (its kind and reason)
// or KindUnavailable. Undoing what was stored is the caller's.
func CommitCall(md *wire.Client, op string, req wire.CommitRequest) (wire.CommitReply, int, error) {
	reply, status, err := md.Commit(req)
	if err == nil && status != fasthttp.StatusCreated && status != fasthttp.StatusNoContent {
		err = shoal.Errorf(op, shoal.KindUnavailable, "md answered the commit with %d", status)
	}
	return reply, status, err
}
