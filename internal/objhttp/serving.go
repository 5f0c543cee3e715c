package objhttp

import (
	"net"
	"sync"

	"github.com/valyala/fasthttp"
)

// Serving runs a data server's or gw's fasthttp server on one listener so
// that Close ends Serve whenever it comes: fasthttp's Shutdown closes only
// the listeners Serve has registered, so a Close that came before (a test
// whose server got no request, a shutdown racing the start) left Serve
// running forever.
type Serving struct {
	mu     sync.Mutex
	ln     net.Listener
	closed bool
}

// Serve serves h on ln until Shutdown; at once nil if Shutdown came first.
func (s *Serving) Serve(h *fasthttp.Server, ln net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return nil
	}
	s.ln = ln
	s.mu.Unlock()
	return h.Serve(ln)
}

// Shutdown shuts h down gracefully (fasthttp's Shutdown: connections
// finish their requests), then closes the listener in case h had not
// registered it yet.
func (s *Serving) Shutdown(h *fasthttp.Server) error {
	s.mu.Lock()
	s.closed = true
	ln := s.ln
	s.mu.Unlock()
	err := h.Shutdown()
	if ln != nil {
		ln.Close() // closed already unless Serve had not registered it
	}
	return err
}
