package httperr

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// TestReadError: a PUT announcing 3 GB is refused on a 32-bit platform
// (make test-arm runs this under qemu-arm) with a 413 that says to send
// the body chunked, before any handler runs; on 64-bit the handler gets
// it. A malformed Content-Length is a 400 everywhere, a header past the
// limit a 431.
func TestReadError(t *testing.T) {
	handled := make(chan int64, 4)
	srv := &fasthttp.Server{ErrorHandler: ReadError, StreamRequestBody: true, ReadBufferSize: 4096,
		Handler: func(ctx *fasthttp.RequestCtx) {
			handled <- int64(ctx.Request.Header.ContentLength())
			ctx.SetConnectionClose()
			ctx.SetStatusCode(fasthttp.StatusAccepted)
		}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Shutdown()
	dial := func(header string) net.Conn {
		t.Helper()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "PUT /f HTTP/1.1\r\nHost: x\r\n%s\r\n\r\n", header)
		return c
	}
	send := func(header string) (*http.Response, string) {
		t.Helper()
		c := dial(header)
		defer c.Close()
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("%q: %v", header, err)
		}
		b := make([]byte, 512)
		n, _ := resp.Body.Read(b)
		return resp, string(b[:n])
	}

	if strconv.IntSize == 32 {
		resp, body := send("Content-Length: 3000000000")
		if resp.StatusCode != 413 || !strings.Contains(body, "Transfer-Encoding: chunked") || len(handled) != 0 {
			t.Errorf("3 GB on 32-bit: %d %q, handler ran %d times; want 413 saying chunked", resp.StatusCode, body, len(handled))
		}
	} else {
		c := dial("Content-Length: 3000000000") // the handler gets it; most of its body never comes
		c.Write(make([]byte, 64<<10))
		select {
		case n := <-handled:
			if n != 3_000_000_000 {
				t.Errorf("3 GB on 64-bit: the handler saw a length of %d", n)
			}
		case <-time.After(10 * time.Second):
			t.Error("3 GB on 64-bit: the handler did not run")
		}
		c.Close()
	}
	if resp, body := send("Content-Length: 12x"); resp.StatusCode != 400 {
		t.Errorf("malformed length: %d %q, want 400", resp.StatusCode, body)
	}
	if resp, body := send("X-Big: " + strings.Repeat("a", 8000)); resp.StatusCode != 431 {
		t.Errorf("a header past the limit: %d %q, want 431", resp.StatusCode, body)
	}
}
