package netguard

import (
	"errors"
	"net"
	"os"

	"github.com/valyala/fasthttp"
)

// RetryOnlyClosed is the RetryIfErr of a client that dials through Dialer
// (md's, to data servers): a GET or HEAD is sent again on a new connection
// when the pooled one it went out on turned out closed, never after the
// peer stopped answering (an idle timeout). fasthttp's default asks such a
// peer up to five times, so a frozen data server held a proxied GET for
// five idle limits, where md moves on to the next replica, or answers 503,
// after one.
func RetryOnlyClosed(req *fasthttp.Request, _ int, err error) (resetTimeout, retry bool) {
	if !req.Header.IsGet() && !req.Header.IsHead() {
		return false, false
	}
	var ne net.Error
	timedOut := errors.Is(err, fasthttp.ErrTimeout) || errors.Is(err, os.ErrDeadlineExceeded) ||
		errors.As(err, &ne) && ne.Timeout()
	return false, !timedOut
}
