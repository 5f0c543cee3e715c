package md

import (
	"bytes"
	"net"
	"strings"

	"github.com/valyala/fasthttp"
)

// Active content: stored files a browser would render and run scripts
// of, from the storage origin, if served with their own type. They keep
// their type (WebDAV clients and browsers showing an image need it) but
// run in a sandbox, or are served as downloads.

// How md serves active content (Options.ActiveContent).
const (
	ActiveSandbox    = "sandbox"
	ActiveAttachment = "attachment"
)

var (
	hdrCSP         = []byte("Content-Security-Policy")
	valSandbox     = []byte("sandbox")
	hdrDisposition = []byte("Content-Disposition")
	valAttachment  = []byte("attachment")
)

// isActive reports whether a browser would execute content of type ct.
func isActive(ct []byte) bool {
	if i := bytes.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	ct = bytes.TrimSpace(ct)
	for _, a := range activeTypes {
		if bytes.EqualFold(ct, a) {
			return true
		}
	}
	return false
}

var activeTypes = [][]byte{
	[]byte("text/html"), []byte("application/xhtml+xml"), []byte("image/svg+xml"), []byte("text/xml"),
	[]byte("application/xml"), []byte("text/javascript"), []byte("application/javascript"),
	[]byte("application/ecmascript"), []byte("text/ecmascript"),
}

// guardActive adds the header that defuses active content of type ct.
func (s *Server) guardActive(h *fasthttp.ResponseHeader, ct []byte) {
	if !isActive(ct) {
		return
	}
	if s.opts.ActiveContent == ActiveAttachment {
		h.SetBytesKV(hdrDisposition, valAttachment)
		return
	}
	h.SetBytesKV(hdrCSP, valSandbox)
}

// hostAllowed reports whether a request's Host (port left out) is one
// md answers to.
func (s *Server) hostAllowed(host []byte) bool {
	name := b2s(host)
	if h, _, err := net.SplitHostPort(name); err == nil {
		name = h
	}
	name = strings.TrimSuffix(name, ".")
	for _, a := range s.opts.AllowedHosts {
		if strings.EqualFold(a, name) {
			return true
		}
	}
	return false
}
