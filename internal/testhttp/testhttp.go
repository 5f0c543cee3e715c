// Package testhttp holds the helpers the HTTP servers' tests share: a
// loopback listener, serving until the test ends, and one request with
// net/http.
package testhttp

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"testing"
)

// Listen returns a listener on a random 127.0.0.1 port and its base URL.
func Listen(t testing.TB) (net.Listener, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln, "http://" + ln.Addr().String()
}

// Server is what Serve runs: diskserver.Server, gw.Server.
type Server interface {
	Serve(net.Listener) error
	Close() error
}

// Serve runs srv on ln; when the test ends it closes srv and waits until
// Serve has returned.
func Serve(t testing.TB, srv Server, ln net.Listener) {
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Close()
		<-done
	})
}

// Do sends one request with net/http and returns status, headers and body;
// a transport error fails the test.
func Do(t testing.TB, method, url string, body io.Reader, hdr map[string]string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading body: %v", method, url, err)
	}
	return resp.StatusCode, resp.Header, b
}

// DoBytes is Do with the body as bytes (nil: none).
func DoBytes(t testing.TB, method, url string, body []byte, hdr map[string]string) (int, http.Header, []byte) {
	t.Helper()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	return Do(t, method, url, r, hdr)
}
