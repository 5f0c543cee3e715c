package objhttp

import (
	"net"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// TestServingShutdownFirst: Serve ends (and frees its listener) whether
// Shutdown comes before it or after it started.
func TestServingShutdownFirst(t *testing.T) {
	for _, first := range []bool{true, false} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		var s Serving
		h := &fasthttp.Server{Handler: func(*fasthttp.RequestCtx) {}}
		if first {
			s.Shutdown(h)
		}
		done := make(chan error, 1)
		go func() { done <- s.Serve(h, ln) }()
		if !first {
			time.Sleep(50 * time.Millisecond)
			s.Shutdown(h)
		}
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("shutdown first %v: Serve still running 10 s after Shutdown", first)
		}
		if c, err := net.Dial("tcp", ln.Addr().String()); err == nil {
			c.Close()
			t.Errorf("shutdown first %v: the listener still accepts", first)
		}
	}
}
