package md

import (
	"net"
	"strings"

	"github.com/valyala/fasthttp"

	"shoal/dav"
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

// guardActive adds the header that defuses active content of type ct.
func (s *Server) guardActive(h *fasthttp.ResponseHeader, ct []byte) {
	if !dav.IsActive(ct) {
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
