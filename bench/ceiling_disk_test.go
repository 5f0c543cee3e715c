package bench

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"shoal"
)

func put(t *testing.T, url string, body []byte) int {
	t.Helper()
	req, err := http.NewRequest("PUT", url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// The disk ceiling makes every PUT body a file of its own, byte for
// byte, and answers 500 (leaving nothing) when it cannot.
func TestDiskCeiling(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "puts")
	b := ceilingBackend{backend: "disk", dir: dir}
	srv, _, release, err := b.server(0)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	answered := make(chan int, 8) // each request's status, once answered
	h := srv.Handler
	srv.Handler = func(ctx *fasthttp.RequestCtx) {
		h(ctx)
		answered <- ctx.Response.StatusCode()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln) // the server the command runs: bodies streamed
	defer srv.Shutdown()
	url := "http://" + ln.Addr().String()
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16+3) // 1 MiB and 48 bytes: several buffers
	want := map[int][]byte{0: {}, len(big): big}
	for _, body := range want {
		if code := put(t, url+"/any", body); code != 201 {
			t.Fatalf("PUT of %d bytes = %d, want 201", len(body), code)
		}
	}
	files, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(want) {
		t.Fatalf("%d files after %d PUTs", len(files), len(want))
	}
	for _, f := range files {
		got, err := os.ReadFile(filepath.Join(dir, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want[len(got)]) {
			t.Errorf("%s: %d bytes, not a PUT body", f.Name(), len(got))
		}
	}
	if code := put(t, url+"/any", nil); code != 201 {
		t.Fatalf("PUT = %d", code)
	}
	// A body cut short fails the create: its file is removed.
	c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "PUT /cut HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", len(big))
	c.Write(big[:600<<10])
	c.Close()
	for range len(want) + 1 {
		<-answered // the PUTs before
	}
	select {
	case code := <-answered:
		if code != 500 {
			t.Errorf("cut PUT = %d, want 500", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the cut PUT was never answered")
	}
	if files, err = os.ReadDir(dir); err != nil || len(files) != len(want)+1 {
		t.Fatalf("%d files after a cut PUT (%v), want %d: its file stayed", len(files), err, len(want)+1)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if code := put(t, url+"/any", big); code != 500 {
		t.Errorf("PUT into a removed directory = %d, want 500", code)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the failed PUT left %s: %v", dir, err)
	}
	if r := head(t, url+"/any"); r.StatusCode != 200 {
		t.Errorf("HEAD = %d, want the constant ceiling's 200", r.StatusCode)
	}
}

func TestDiskCeilingNeedsDir(t *testing.T) {
	_, _, _, err := (&ceilingBackend{backend: "disk"}).server(0)
	if !shoal.IsKind(err, shoal.KindInvalid) {
		t.Errorf("--backend disk without --dir: %v, want KindInvalid", err)
	}
}
