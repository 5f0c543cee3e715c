package netguard

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// serve runs a fasthttp server as md and the data servers configure it:
// fasthttp's header timeout and keep-alive idle timeout, streamed bodies,
// and this package's caps and idle deadlines.
func serve(t *testing.T, lim Limits, h fasthttp.RequestHandler) (string, *Listener) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gl := Listen(ln, lim)
	s := &fasthttp.Server{Handler: h, ReadTimeout: 300 * time.Millisecond, IdleTimeout: 300 * time.Millisecond,
		StreamRequestBody: true, CloseOnShutdown: true, HeaderReceived: HeaderReceived(lim.ReadIdle)}
	go s.Serve(gl)
	t.Cleanup(func() { s.Shutdown() })
	return ln.Addr().String(), gl
}

// closedWithin reports whether the server closes c within d (reads until
// EOF or an error other than our own deadline).
func closedWithin(c net.Conn, d time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return false
	}
	return true
}

func TestSlowlorisCut(t *testing.T) {
	addr, _ := serve(t, Limits{}, func(ctx *fasthttp.RequestCtx) {})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	done := make(chan bool)
	go func() { done <- closedWithin(c, 5*time.Second) }()
	for _, b := range []byte("GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ") {
		if _, err := c.Write([]byte{b}); err != nil {
			break // cut
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !<-done {
		t.Fatalf("a client sending its headers a byte every 50 ms was not cut within 5 s")
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("cut after %v; the header timeout is 300 ms", el)
	}
}

func TestIdleKeepAliveCut(t *testing.T) {
	addr, _ := serve(t, Limits{}, func(ctx *fasthttp.RequestCtx) { ctx.WriteString("ok") })
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("first request: %v %v", resp, err)
	}
	if !closedWithin(c, 3*time.Second) {
		t.Fatal("an idle keep-alive connection stayed open past the idle timeout")
	}
}

func TestConnectionCap(t *testing.T) {
	release := make(chan struct{})
	addr, gl := serve(t, Limits{MaxConns: 3, MaxConnsPerIP: 2}, func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) == "/slow" {
			<-release
		}
		ctx.WriteString("ok")
	})
	// Two requests in flight from this address: the per-address cap.
	results := make(chan error, 2)
	for range 2 {
		go func() {
			resp, err := http.Get("http://" + addr + "/slow")
			if err == nil {
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if string(b) != "ok" {
					err = io.ErrUnexpectedEOF
				}
			}
			results <- err
		}()
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		gl.mu.Lock()
		n := gl.total
		gl.mu.Unlock()
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the two slow requests did not connect")
		}
		time.Sleep(10 * time.Millisecond)
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("the surplus connection got no answer: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	c.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "too many connections") {
		t.Errorf("surplus connection: %d, Retry-After %q, %q", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	if gl.Refused() != 1 {
		t.Errorf("Refused() = %d", gl.Refused())
	}
	close(release)
	for range 2 {
		if err := <-results; err != nil {
			t.Errorf("a request in flight was harmed by the cap: %v", err)
		}
	}
}

// TestStreamedBodyIdle: a body that keeps coming, however slowly, is read
// past the header timeout; one that stops for ReadIdle is cut.
func TestStreamedBodyIdle(t *testing.T) {
	addr, _ := serve(t, Limits{ReadIdle: 250 * time.Millisecond}, func(ctx *fasthttp.RequestCtx) {
		BodyIdle(ctx.Conn())
		n, err := io.Copy(io.Discard, ctx.RequestBodyStream())
		if err != nil {
			ctx.SetStatusCode(499)
			return
		}
		ctx.SetBodyString(strings.Repeat("x", int(n)))
	})
	// fasthttp reads the first 8 KiB before the handler, within ReadIdle of
	// the headers (HeaderReceived); they come at once, the rest trickles.
	const head = 8 << 10
	send := func(pause time.Duration, chunks int) (int, error) {
		pr, pw := io.Pipe()
		go func() {
			if _, err := pw.Write(make([]byte, head)); err != nil {
				return
			}
			for range chunks {
				time.Sleep(pause)
				if _, err := pw.Write([]byte("abcd")); err != nil {
					return
				}
			}
			pw.Close()
		}()
		req, _ := http.NewRequest("PUT", "http://"+addr+"/", pr)
		req.ContentLength = int64(head + 4*chunks)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return len(b), nil
	}
	// 12 chunks 100 ms apart: 1.2 s, four times the header timeout.
	if n, err := send(100*time.Millisecond, 12); err != nil || n != head+48 {
		t.Errorf("a slow but steady body: %d bytes echoed, %v", n, err)
	}
	if n, err := send(700*time.Millisecond, 2); err == nil && n == head+8 {
		t.Errorf("a body silent for 700 ms was read whole (idle limit 250 ms)")
	}
}

// TestWriteIdle: a response to a client that stops reading is cut after
// WriteIdle, not held open.
func TestWriteIdle(t *testing.T) {
	errs := make(chan error, 1)
	addr, _ := serve(t, Limits{WriteIdle: 300 * time.Millisecond}, func(ctx *fasthttp.RequestCtx) {
		ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
			chunk := bytes.Repeat([]byte("z"), 64<<10)
			for i := 0; i < 4096; i++ { // 256 MiB at most
				if _, err := w.Write(chunk); err != nil {
					errs <- err
					return
				}
			}
			errs <- w.Flush()
		})
	})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n") // and never read
	select {
	case err := <-errs:
		if err == nil {
			t.Fatal("256 MiB were written to a client that reads nothing")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the write to a client that reads nothing was not cut within 10 s")
	}
}

// TestSendfileRanges: ReadFrom through the guard sends a file and a range
// of it (an io.LimitedReader, as fasthttp gives it) byte-exact, in chunks.
func TestSendfileRanges(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), (sendChunk+12345)/16)
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	gl := Listen(ln, Limits{WriteIdle: time.Second})
	for _, r := range [][2]int64{{0, int64(len(data))}, {7, int64(len(data)) - 100}, {int64(len(data)) - 3, int64(len(data))}} {
		got := make(chan []byte)
		go func() {
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				got <- nil
				return
			}
			b, _ := io.ReadAll(c)
			got <- b
		}()
		sc, err := gl.Accept()
		if err != nil {
			t.Fatal(err)
		}
		f, _ := os.Open(p)
		f.Seek(r[0], io.SeekStart)
		lr := &io.LimitedReader{R: f, N: r[1] - r[0]}
		n, err := sc.(io.ReaderFrom).ReadFrom(lr)
		f.Close()
		sc.Close()
		b := <-got
		if err != nil || n != r[1]-r[0] || !bytes.Equal(b, data[r[0]:r[1]]) || lr.N != 0 {
			t.Errorf("range %v: sent %d, %v; received %d bytes, equal %v; left %d", r, n, err, len(b), bytes.Equal(b, data[r[0]:r[1]]), lr.N)
		}
	}
}

// TestLingerAnswersAClientStillSending: a handler that answers a PUT after
// reading a little of its body and closes the connection (a body over its
// limit) calls Linger: the client, still sending 32 MiB, neither gets a
// reset on its sends nor loses the answer. Closed at once, the socket
// resets the connection (curl then fails with "Send failure").
func TestLingerAnswersAClientStillSending(t *testing.T) {
	addr, _ := serve(t, Limits{ReadIdle: time.Second}, func(ctx *fasthttp.RequestCtx) {
		io.CopyN(io.Discard, ctx.RequestBodyStream(), 1<<10)
		ctx.SetStatusCode(fasthttp.StatusRequestEntityTooLarge)
		ctx.SetConnectionClose()
		Linger(ctx.Conn())
	})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const size = 32 << 20
	c.SetDeadline(time.Now().Add(10 * time.Second))
	sent := make(chan error, 1)
	go func() {
		_, err := io.WriteString(c, "PUT /f HTTP/1.1\r\nHost: x\r\nContent-Length: 33554432\r\n\r\n")
		piece := make([]byte, 64<<10)
		for n := 0; err == nil && n < size; n += len(piece) {
			_, err = c.Write(piece)
		}
		sent <- err
	}()
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("status %d, want 413", res.StatusCode)
	}
	if err := <-sent; err != nil {
		t.Errorf("sending the body: %v; want every send accepted (read and dropped by the server)", err)
	}
}

// TestDialerSilentPeer: a fasthttp client dialing through Dialer gets a
// timeout from a server that accepts and reads the request but never
// answers (a stopped process), after the idle limit, over a new and a
// reused connection alike. fasthttp clears the read deadline before
// reading each answer; that once ended idle mode and the client waited
// for ever.
func TestDialerSilentPeer(t *testing.T) {
	answer := make(chan bool, 4) // true: answer the next request
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					if _, err := http.ReadRequest(br); err != nil {
						return
					}
					if !<-answer {
						io.Copy(io.Discard, br) // silent from now on
						return
					}
					io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
				}
			}()
		}
	}()
	cl := &fasthttp.Client{Dial: Dialer(fasthttp.Dial, 200*time.Millisecond), StreamResponseBody: true, MaxIdemponentCallAttempts: 1}
	get := func() error {
		req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		defer fasthttp.ReleaseRequest(req)
		defer fasthttp.ReleaseResponse(resp)
		req.SetRequestURI("http://" + ln.Addr().String() + "/x")
		done := make(chan error, 1)
		go func() {
			err := cl.Do(req, resp)
			if err == nil {
				_, err = io.ReadAll(resp.BodyStream())
			}
			done <- err
		}()
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second): // 50 idle limits: a hang
			t.Fatal("the client still waits for a silent peer after 10 s (idle limit 200 ms)")
			return nil
		}
	}
	answer <- false
	if err := get(); !errors.Is(err, fasthttp.ErrTimeout) {
		t.Errorf("GET of a silent peer, new connection: %v; want a timeout", err)
	}
	answer <- true
	answer <- false
	if err := get(); err != nil {
		t.Fatalf("GET answered: %v", err)
	}
	if err := get(); !errors.Is(err, fasthttp.ErrTimeout) {
		t.Errorf("GET of a peer silent on a reused connection: %v; want a timeout", err)
	}
}
