package diskserver

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"shoal/internal/testhttp"
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
	ln, url := testhttp.Listen(t)
	if opts.Keys == nil {
		opts.Keys = sign.Random()
	}
	if len(opts.Dirs) == 0 {
		opts.Dirs = []string{t.TempDir()}
	}
	if opts.ReserveBytes == 0 {
		opts.ReserveBytes = -1
	}
	opts.PublicURL = url
	srv, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	testhttp.Serve(t, srv, ln)
	return &testServer{Server: srv, URL: url, Keys: opts.Keys, Dir: opts.Dirs[0]}
}

// signed returns a URL for method on id valid for a minute.
func (ts *testServer) signed(method, id, upload string) string {
	return ts.Keys.URL(ts.URL, method, id, upload, time.Now().Add(time.Minute))
}

// do sends one request with net/http and returns status, headers and body.
func do(t testing.TB, method, url string, body []byte, hdr map[string]string) (int, http.Header, []byte) {
	t.Helper()
	return testhttp.DoBytes(t, method, url, body, hdr)
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
