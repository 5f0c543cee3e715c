package httperr

import (
	"errors"
	"net"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"shoal"
)

// ReadError is the ErrorHandler of every shoal server: the answer to a
// request fasthttp could not read. fasthttp keeps a Content-Length in a
// native int, so on 32-bit ARM a body of 2 GiB or more cannot be
// announced with one: that is a 413 saying to send it chunked, instead
// of fasthttp's "Error when parsing request". Anything else is answered
// as fasthttp does: 431 for a header past the limit, 408 for a read
// timeout, 400.
func ReadError(ctx *fasthttp.RequestCtx, err error) {
	var small *fasthttp.ErrSmallBuffer
	var op *net.OpError
	switch {
	case strconv.IntSize == 32 && strings.Contains(err.Error(), "content-length: too long int"):
		Write(ctx, shoal.Errorf("request", shoal.KindTooLarge,
			"a Content-Length of 2 GiB or more cannot be read by this 32-bit server: send the body with Transfer-Encoding: chunked"))
	case errors.As(err, &small):
		ctx.Error("Too big request header", fasthttp.StatusRequestHeaderFieldsTooLarge)
	case errors.As(err, &op) && op.Timeout():
		ctx.Error("Request timeout", fasthttp.StatusRequestTimeout)
	default:
		ctx.Error("Error when parsing request", fasthttp.StatusBadRequest)
	}
}
