package netguard

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// fileOf writes n patterned bytes to a temp file and opens it as
// diskserver opens objects (shared by every reader).
func fileOf(t *testing.T, n int) ([]byte, *os.File) {
	t.Helper()
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(i*7 + i/251)
	}
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return data, f
}

type countCloser struct{ n int }

func (c *countCloser) Close() error { c.n++; return nil }

// TestFileBodySharedFile: spans of one open file sent at the same time
// over several guarded connections (bare, and in the io.LimitedReader
// fasthttp hands over) arrive byte-exact, and the file's own position
// never moves: every body reads at its offset. Closing a body closes what
// it was given, not the file.
func TestFileBodySharedFile(t *testing.T) {
	data, f := fileOf(t, 3*sendChunk/2+4321)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	gl := Listen(ln, Limits{WriteIdle: 5 * time.Second})
	spans := [][2]int64{{0, int64(len(data))}, {1, 65537}, {int64(len(data)) - 9, int64(len(data))}, {sendChunk - 5, sendChunk + 70000}, {12345, 12346}}
	var wg sync.WaitGroup
	errs := make(chan error, 2*len(spans))
	for i, sp := range spans {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		sc, err := gl.Accept()
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(2)
		go func() { // the client
			defer wg.Done()
			defer c.Close()
			b, err := io.ReadAll(c)
			if err != nil || !bytes.Equal(b, data[sp[0]:sp[1]]) {
				errs <- fmt.Errorf("span %v: received %d bytes (%v), equal %v", sp, len(b), err, bytes.Equal(b, data[sp[0]:sp[1]]))
			}
		}()
		go func() { // the server
			defer wg.Done()
			defer sc.Close()
			cc := &countCloser{}
			body := NewFileBody(f, sp[0], sp[1]-sp[0], cc)
			var r io.Reader = body
			var lr *io.LimitedReader
			if i%2 == 0 {
				lr = &io.LimitedReader{R: body, N: sp[1] - sp[0]}
				r = lr
			}
			n, err := sc.(io.ReaderFrom).ReadFrom(r)
			body.Close()
			if err != nil || n != sp[1]-sp[0] || (lr != nil && lr.N != 0) || cc.n != 1 {
				errs <- fmt.Errorf("span %v: sent %d, %v; closed %d times", sp, n, err, cc.n)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if pos, err := f.Seek(0, io.SeekCurrent); err != nil || pos != 0 {
		t.Errorf("the shared file's position moved to %d (%v)", pos, err)
	}
	if _, err := f.Stat(); err != nil {
		t.Errorf("the file was closed with a body: %v", err)
	}
}

// TestFileBodyCopiedWithoutSendfile: on a connection that cannot
// sendfile (here a pipe; TLS is the real case) a FileBody is copied
// through its Read, at its offset.
func TestFileBodyCopiedWithoutSendfile(t *testing.T) {
	data, f := fileOf(t, 100000)
	a, b := net.Pipe()
	g := wrap(a, Limits{WriteIdle: 5 * time.Second}, nil)
	if FileFollows(g, 90000) {
		t.Error("FileFollows on a pipe: true, want false (no sendfile: the header must not be flushed alone)")
	}
	got := make(chan []byte)
	go func() {
		r, _ := io.ReadAll(b)
		got <- r
	}()
	n, err := g.(io.ReaderFrom).ReadFrom(&io.LimitedReader{R: NewFileBody(f, 3, 90000, nil), N: 90000})
	g.Close()
	r := <-got
	if err != nil || n != 90000 || !bytes.Equal(r, data[3:90003]) {
		t.Fatalf("sent %d, %v; received %d bytes, equal %v", n, err, len(r), bytes.Equal(r, data[3:90003]))
	}
}

// TestFileFollowsThroughFasthttp: a fasthttp server answering with
// FileBody and FileFollows (the header flushed on its own when it says
// so), as md and the data servers do, sends
// byte-exact responses on one keep-alive connection: bodies larger and
// smaller than fasthttp's write buffer, a range from an offset, and a
// response marked FileFollows whose body is not a file after all (the
// mark's one misuse: its header is held by the kernel for a moment,
// never lost).
func TestFileFollowsThroughFasthttp(t *testing.T) {
	data, f := fileOf(t, 300000)
	addr, _ := serve(t, Limits{WriteIdle: 5 * time.Second}, func(ctx *fasthttp.RequestCtx) {
		arg := func(k string) int64 { v, _ := strconv.ParseInt(string(ctx.QueryArgs().Peek(k)), 10, 64); return v }
		off, n, mark := arg("off"), arg("n"), arg("mark")
		ctx.Response.ImmediateHeaderFlush = FileFollows(ctx.Conn(), mark)
		if want := mark > writeBufferSize && runtime.GOOS == "linux"; ctx.Response.ImmediateHeaderFlush != want {
			t.Errorf("FileFollows(plain TCP, %d) = %v, want %v (flush the header alone before a sendfile of more than a buffer)", mark, !want, want)
		}
		if ctx.QueryArgs().Has("memory") {
			ctx.SetBody(data[off : off+n])
			return
		}
		ctx.SetBodyStream(NewFileBody(f, off, n, nil), int(n))
	})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	for _, tc := range []struct {
		off, n, mark int64
		memory       bool
	}{
		{0, 65536, 65536, false}, {1, 299999, 299999, false}, {5000, 100, 100, false}, {299990, 10, 10, false},
		{0, 200000, 200000, true}, // the mark on a large body from memory: its later writes push the first
		{17, 4000, 4000, false}, {0, 65536, 65536, false},
		{0, 100, 65536, true}, // the misuse: nothing follows the held response
		{0, 65536, 65536, false},
	} {
		q := fmt.Sprintf("off=%d&n=%d&mark=%d", tc.off, tc.n, tc.mark)
		if tc.memory {
			q += "&memory=1"
		}
		fmt.Fprintf(c, "GET /?%s HTTP/1.1\r\nHost: x\r\n\r\n", q)
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		body, err := readResponse(br)
		if want := data[tc.off : tc.off+tc.n]; err != nil || !bytes.Equal(body, want) {
			t.Fatalf("%s: %v; %d bytes, equal %v", q, err, len(body), bytes.Equal(body, want))
		}
	}
}

// readResponse reads one HTTP/1.1 response with a Content-Length.
func readResponse(br *bufio.Reader) ([]byte, error) {
	length := -1
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(k, "Content-Length") {
			length, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	if length < 0 {
		return nil, errors.New("no Content-Length")
	}
	body := make([]byte, length)
	_, err := io.ReadFull(br, body)
	return body, err
}
