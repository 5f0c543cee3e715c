package diskserver

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"shoal/sign"
)

// testServer is a real Server on a loopback port.
type testServer struct {
	*Server
	URL  string
	Keys *sign.Keys
	Dir  string
}

func startServer(t testing.TB, opts Options) *testServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if opts.Keys == nil {
		opts.Keys = sign.Random()
	}
	if len(opts.Dirs) == 0 {
		opts.Dirs = []string{t.TempDir()}
	}
	if opts.ReserveBytes == 0 {
		opts.ReserveBytes = -1
	}
	url := "http://" + ln.Addr().String()
	opts.PublicURL = url
	srv, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Close()
		<-done
	})
	return &testServer{Server: srv, URL: url, Keys: opts.Keys, Dir: opts.Dirs[0]}
}

// signed returns a URL for method on id valid for a minute.
func (ts *testServer) signed(method, id, upload string) string {
	return ts.Keys.URL(ts.URL, method, id, upload, time.Now().Add(time.Minute))
}

// do sends one request with net/http and returns status, headers and body.
func do(t testing.TB, method, url string, body []byte, hdr map[string]string) (int, http.Header, []byte) {
	t.Helper()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
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
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

// tmpFiles lists what is left in a data dir's tmp/.
func tmpFiles(t testing.TB, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(filepath.Join(dir, tmpDir))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}
