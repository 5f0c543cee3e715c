package tpc

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"shoal/internal/testhttp"
	"shoal/internal/tpcpeer"
	"shoal/tlsconf"
)

// tlsSource is an https source of data at /f (Digest on request), its
// certificate from a fresh private CA; it returns its URL and the CA.
func tlsSource(t *testing.T, data []byte) (string, []byte) {
	t.Helper()
	ca, err := tlsconf.NewCA("tpc test CA")
	if err != nil {
		t.Fatal(err)
	}
	s := tpcpeer.NewSourceTLS(t, data, testhttp.ServerTLS(t, ca))
	return s.URL(""), ca.CertPEM
}

// serveTPC runs a fasthttp server whose every request is answered by
// c.Serve with run, and returns its URL.
func serveTPC(t *testing.T, c *Client, run Run) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	remote := mustURL(t, "https://remote.example.org/f?sig=SECRET-QUERY")
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) { c.Serve(ctx, ModePull, remote, run) }}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Shutdown() })
	return "http://" + ln.Addr().String()
}

// copyStream makes a COPY to u and reads its marker stream as davix does,
// noting when each marker arrived.
func copyStream(t *testing.T, u string) (Outcome, []time.Time, *http.Response) {
	t.Helper()
	req, _ := http.NewRequest("COPY", u, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var at []time.Time
	out, err := ReadStream(resp.Body, func(Marker) { at = append(at, time.Now()) })
	if err != nil {
		t.Fatalf("reading the stream: %v", err)
	}
	return out, at, resp
}

// TestServeStream: 202 text/plain, a marker at once, one per interval
// with byte counts that never go down, one at the end, then the final
// line — success, the run's failure, or "internal error" when it panics
// (never a stream without a final line); the remote's query is never
// logged.
func TestServeStream(t *testing.T) {
	c, logs := newTestClient(t, Options{MarkerInterval: 100 * time.Millisecond})
	var runs atomic.Int32
	u := serveTPC(t, c, func(ctx context.Context, p *Progress) error {
		switch runs.Add(1) {
		case 1:
			for i := range 10 {
				p.bytes.Store(int64(i) << 20)
				if i == 5 {
					p.bytes.Store(1 << 20) // a resent body starts over: markers do not go back
				}
				time.Sleep(50 * time.Millisecond)
			}
			return nil
		case 2:
			return failf(0, "the source answered 404 Not Found")
		default:
			var m map[string]int
			m["boom"]++ // a panic
			return nil
		}
	})
	out, at, resp := copyStream(t, u)
	if resp.StatusCode != 202 || resp.Header.Get("Content-Type") != "text/plain" {
		t.Fatalf("%d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if !out.Final || !out.Success || len(out.Markers) < 4 {
		t.Fatalf("%+v", out)
	}
	for i := 1; i < len(out.Markers); i++ {
		if out.Markers[i].Bytes < out.Markers[i-1].Bytes {
			t.Errorf("marker %d: %d bytes after %d", i, out.Markers[i].Bytes, out.Markers[i-1].Bytes)
		}
		if gap := at[i].Sub(at[i-1]); gap > 400*time.Millisecond {
			t.Errorf("marker %d came %v after the one before (interval 100ms)", i, gap)
		}
	}
	if last := out.Markers[len(out.Markers)-1]; last.Bytes != 9<<20 || last.Timestamp < time.Now().Unix()-5 {
		t.Errorf("last marker %+v", last)
	}
	if out, _, _ := copyStream(t, u); !out.Final || out.Failure != "the source answered 404 Not Found" {
		t.Errorf("failure: %+v", out)
	}
	if out, _, _ := copyStream(t, u); !out.Final || out.Failure != "internal error" {
		t.Errorf("panic: %+v", out)
	}
	if strings.Contains(logs.String(), "SECRET-QUERY") {
		t.Errorf("the remote's query reached the log:\n%s", logs)
	}
	s := c.Stats()
	if s.Transfers[0][statSuccess] != 1 || s.Transfers[0][statFailure] != 2 || s.Count[0] != 3 || s.Bytes[0] == 0 {
		t.Errorf("stats %+v", s)
	}
}

// TestServeClientGone: a client that hangs up on the marker stream
// cancels the transfer within a poll, long before the next marker.
func TestServeClientGone(t *testing.T) {
	c, _ := newTestClient(t, Options{MarkerInterval: time.Hour})
	cancelled := make(chan time.Time, 1)
	u := serveTPC(t, c, func(ctx context.Context, p *Progress) error {
		<-ctx.Done()
		cancelled <- time.Now()
		return ctx.Err()
	})
	conn, err := net.Dial("tcp", strings.TrimPrefix(u, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(conn, "COPY /f HTTP/1.1\r\nHost: x\r\n\r\n")
	br := bufio.NewReader(conn)
	line, _ := br.ReadString('\n')
	if !strings.Contains(line, "202") {
		t.Fatalf("status line %q", line)
	}
	for !strings.HasPrefix(line, "End") { // the first marker
		if line, err = br.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	hungUp := time.Now()
	conn.Close()
	select {
	case at := <-cancelled:
		if d := at.Sub(hungUp); d > 2*time.Second {
			t.Errorf("cancelled %v after the hang-up", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the transfer went on after its client hung up")
	}
	deadline := time.Now().Add(5 * time.Second)
	for c.Stats().Transfers[0][statCancelled] != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("stats %+v", c.Stats())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
