package md

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"shoal"
)

// rawRequest writes head (and then body) on a fresh TCP connection to
// addr and returns the connection and a reader on it.
func rawConn(t *testing.T, base string) (net.Conn, *bufio.Reader) {
	t.Helper()
	u, _ := url.Parse(base)
	c, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(20 * time.Second))
	return c, bufio.NewReader(c)
}

// TestExpectContinueRedirect: in auto mode a PUT with Expect: 100-continue
// gets its 307 before any body is sent, and no 100 Continue first.
func TestExpectContinueRedirect(t *testing.T) {
	e := newEnv(t, DataAuto)
	c, br := rawConn(t, e.url)
	defer c.Close()
	fmt.Fprintf(c, "PUT /big HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\nExpect: 100-continue\r\n\r\n")
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 307 {
		t.Fatalf("status %d, want 307 (and no 100 Continue)", res.StatusCode)
	}
	loc := res.Header.Get("Location")
	if !strings.HasPrefix(loc, e.dsURL+"/obj/") {
		t.Fatalf("Location %q, want the data server's", loc)
	}
	data := bytes.Repeat([]byte("e"), 100000)
	e.do("PUT", loc, nil, data).want(t, "PUT to Location", 201, "")
	if r := e.get("/big", nil); r.body != string(data) {
		t.Errorf("GET after redirected PUT: %d, %d bytes", r.status, len(r.body))
	}

	// Errors are answered before the body too.
	c2, br2 := rawConn(t, e.url)
	defer c2.Close()
	fmt.Fprintf(c2, "PUT /missing/big HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\nExpect: 100-continue\r\n\r\n")
	res, err = http.ReadResponse(br2, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 409 || !strings.Contains(string(b), "parent") {
		t.Errorf("PUT into missing parent with Expect: %d %q", res.StatusCode, b)
	}

	// A small file (inline) gets 100 Continue and is stored by md.
	c3, br3 := rawConn(t, e.url)
	defer c3.Close()
	fmt.Fprintf(c3, "PUT /small HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
	line, _ := br3.ReadString('\n')
	if !strings.HasPrefix(line, "HTTP/1.1 100") {
		t.Fatalf("small PUT: %q, want 100 Continue", line)
	}
	br3.ReadString('\n')
	fmt.Fprintf(c3, "hello")
	res, err = http.ReadResponse(br3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 201 {
		t.Errorf("small PUT after 100: %d", res.StatusCode)
	}
}

// TestRedirectWithoutExpect: a PUT that does not wait for 100 Continue
// sends its body to md anyway; in redirect mode md reads and drops it and
// answers 307 (and a refusal, 409), keeping the connection, rather than
// closing on an unread body, which resets the client's connection (Go's
// client then reports the reset, not the 307).
func TestRedirectWithoutExpect(t *testing.T) {
	e := newEnv(t, DataRedirect)
	c, br := rawConn(t, e.url)
	defer c.Close()
	body := bytes.Repeat([]byte("x"), 1<<20)
	for _, req := range []struct {
		path   string
		status int
	}{{"/big", 307}, {"/missing/big", 409}, {"/big2", 307}} {
		fmt.Fprintf(c, "PUT %s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", req.path, len(body))
		if _, err := c.Write(body); err != nil {
			t.Fatalf("PUT %s: writing the body: %v", req.path, err)
		}
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("PUT %s: %v", req.path, err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != req.status || res.Close {
			t.Fatalf("PUT %s without Expect: %d (close %v), want %d on a kept connection", req.path, res.StatusCode, res.Close, req.status)
		}
	}
}

// TestExpectIgnored: a client that asks Expect: 100-continue but sends
// its body before md answers (Go's client with a zero
// ExpectContinueTimeout, or any client whose wait ran out first) reads
// md's early answer, 307 or a refusal, rather than a reset: the answer
// ends the connection (fasthttp's rule for Expect), and md reads and
// drops the body for a while before it closes. The finding: an upload
// refused with 507 by a full quota got "broken pipe" (md's
// TestQuotaConcurrentUploads under qemu-arm, where md took longer than
// the client's 1 s wait).
func TestExpectIgnored(t *testing.T) {
	e := newEnv(t, DataRedirect)
	body := bytes.Repeat([]byte("x"), 8<<20) // more than the sockets buffer
	for _, req := range []struct {
		path   string
		status int
	}{{"/big", 307}, {"/missing/big", 409}} {
		for i := range 5 {
			// Zero ExpectContinueTimeout: the body goes at once.
			client := &http.Client{Transport: &http.Transport{}, Timeout: 20 * time.Second,
				CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			r, _ := http.NewRequest("PUT", e.url+req.path, bytes.NewReader(body))
			r.Header.Set("Expect", "100-continue")
			res, err := client.Do(r)
			if err != nil {
				t.Fatalf("PUT %s with its body at once (try %d): %v, want %d", req.path, i+1, err, req.status)
			}
			res.Body.Close()
			if res.StatusCode != req.status {
				t.Errorf("PUT %s with its body at once: %d, want %d", req.path, res.StatusCode, req.status)
			}
		}
	}
	if r := e.do("HEAD", "/big", nil, nil); r.status != 404 {
		t.Errorf("HEAD /big after the redirect alone: %d, want 404", r.status)
	}
}

// TestAbandonedPut: a client that dies half-way leaves nothing visible
// and, once the garbage is collected, nothing on disk: the data server
// tells md the upload failed, which drops its reservation at once (no
// expiry left to wait for). Proxy mode (md streams) and redirect mode (client talks to the
// data server).
func TestAbandonedPut(t *testing.T) {
	for _, mode := range []string{DataProxy, DataRedirect} {
		t.Run(mode, func(t *testing.T) {
			e := newEnv(t, mode)
			before := e.snapshot()
			target := e.url
			path := "/half"
			if mode == DataRedirect {
				r := e.do("PUT", "/half", map[string]string{"Content-Length": "0"}, bytes.Repeat([]byte("r"), 10000))
				r.want(t, "PUT", 307, "")
				u, _ := url.Parse(r.h.Get("Location"))
				target, path = e.dsURL, u.RequestURI()
			}
			c, _ := rawConn(t, target)
			fmt.Fprintf(c, "PUT %s HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n", path)
			c.Write(bytes.Repeat([]byte("h"), 300000))
			time.Sleep(100 * time.Millisecond)
			c.Close()
			time.Sleep(300 * time.Millisecond) // let the servers notice
			e.do("HEAD", "/half", nil, nil).want(t, "HEAD after abandoned PUT", 404, "")
			e.do("PROPFIND", "/", map[string]string{"Depth": "1"}, nil).want(t, "listing", 207, "")
			if n, err := e.db.ExpireUploads(context.Background(), time.Now().Add(48*time.Hour)); err != nil || n != 0 {
				t.Errorf("ExpireUploads: %d, %v; want no reservation left (the data server aborted it)", n, err)
			}
			// The data server drains the garbage queue; garbage waits URLTTL.
			deadline := time.Now().Add(10 * time.Second)
			for {
				objs := 0
				e.ds.Store().Walk(context.Background(), func(shoal.ObjectInfo) error { objs++; return nil })
				if objs == 0 || time.Now().After(deadline) {
					if objs != 0 {
						t.Errorf("%d objects left on disk", objs)
					}
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			if after := e.snapshot(); after != before {
				t.Errorf("abandoned PUT left something:\n%s", after)
			}
		})
	}
}

// TestAbandonedInlinePut: a PUT of a file small enough for the catalog
// whose client sends less than its Content-Length and goes away stores
// nothing. Today fasthttp reads so small a body whole before md sees the
// request; were it streamed, md's read of the announced size refuses it.
func TestAbandonedInlinePut(t *testing.T) {
	e := newEnv(t, DataProxy)
	before := e.snapshot()
	c, _ := rawConn(t, e.url)
	fmt.Fprintf(c, "PUT /short HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n")
	c.Write([]byte("ten bytes!"))
	time.Sleep(100 * time.Millisecond)
	c.Close()
	time.Sleep(300 * time.Millisecond) // let md notice
	e.do("HEAD", "/short", nil, nil).want(t, "HEAD after an abandoned small PUT", 404, "")
	if after := e.snapshot(); after != before {
		t.Errorf("abandoned small PUT left something:\n%s", after)
	}
}

// TestOverwriteAtomic: a reader during repeated overwrites sees the old
// content or the new, never a mix.
func TestOverwriteAtomic(t *testing.T) {
	for _, mode := range []string{DataProxy, DataRedirect} {
		t.Run(mode, func(t *testing.T) {
			e := newEnv(t, mode)
			const size = 256 << 10
			a, b := bytes.Repeat([]byte("a"), size), bytes.Repeat([]byte("b"), size)
			e.put("/f", a).want(t, "PUT", 201, "")
			var wg sync.WaitGroup
			stop := make(chan struct{})
			var reads, mixed int
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					r := e.get("/f", nil)
					if r.status != 200 {
						continue // a GET redirected to an object collected meanwhile; not a mix
					}
					reads++
					if r.body != string(a) && r.body != string(b) {
						mixed++
					}
				}
			}()
			for i := 0; i < 20; i++ {
				data := a
				if i%2 == 0 {
					data = b
				}
				e.put("/f", data).want(t, "overwrite", 204, "")
			}
			close(stop)
			wg.Wait()
			if reads == 0 || mixed != 0 {
				t.Errorf("%d reads, %d mixed", reads, mixed)
			}
		})
	}
}

// TestChunkedPut: PUTs without Content-Length (litmus, davfs) work in
// proxy mode, small ones inline and large ones through the data server.
func TestChunkedPut(t *testing.T) {
	e := newEnv(t, DataAuto)
	for _, size := range []int{10, 200000} {
		data := bytes.Repeat([]byte("c"), size)
		c, br := rawConn(t, e.url)
		fmt.Fprintf(c, "PUT /chunked%d HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", size)
		for off := 0; off < size; off += 7000 {
			end := min(off+7000, size)
			fmt.Fprintf(c, "%x\r\n%s\r\n", end-off, data[off:end])
		}
		fmt.Fprintf(c, "0\r\n\r\n")
		res, err := http.ReadResponse(br, nil)
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != 201 {
			t.Errorf("chunked PUT of %d: %d", size, res.StatusCode)
		}
		if r := e.get(fmt.Sprintf("/chunked%d", size), nil); r.body != string(data) {
			t.Errorf("GET chunked%d: %d bytes", size, len(r.body))
		}
	}
}
