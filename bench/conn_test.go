package bench

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/textproto"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// rawServer is a real TCP peer on loopback answering each request with a
// response chosen by its path, byte for byte, to exercise the framings a
// server may use: chunked, close-delimited, HTTP/1.0, 100 Continue, and a
// HEAD answer whose Content-Length announces a body that is not sent.
type rawServer struct {
	url      string
	accepted atomic.Int64
	requests atomic.Int64
	resolved atomic.Int64
}

var rawAnswers = map[string]string{
	"/chunked": "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
		"5;ext=1\r\nhello\r\nA\r\n0123456789\r\n0\r\nX-Trailer: t\r\n\r\n",
	"/close":    "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc",
	"/eof":      "HTTP/1.1 200 OK\r\n\r\nuntil the end",
	"/http10":   "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok",
	"/continue": "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n",
	"/head":     "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n",
	"/bad":      "HTTX/1.1 200 OK\r\n\r\n",
	"/loc":      "HTTP/1.1 302 Found\r\nLocation: chunked\r\nContent-Length: 0\r\n\r\n",
}

func startRaw(t *testing.T) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawServer{url: "http://" + ln.Addr().String()}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.accepted.Add(1)
			go s.serve(c)
		}
	}()
	return s
}

func (s *rawServer) serve(c net.Conn) {
	defer c.Close()
	tp := textproto.NewReader(bufio.NewReader(c))
	for {
		line, err := tp.ReadLine()
		if err != nil {
			return
		}
		hdr, err := tp.ReadMIMEHeader()
		if err != nil {
			return
		}
		if n, _ := strconv.Atoi(hdr.Get("Content-Length")); n > 0 {
			io.CopyN(io.Discard, tp.R, int64(n))
		}
		s.requests.Add(1)
		f := strings.Fields(line)
		path := f[1]
		if i := strings.LastIndexByte(path, '/'); i >= 0 {
			path = path[i:]
		}
		if f[1] == "/dir/chunked" {
			s.resolved.Add(1) // the relative Location of /dir/loc, resolved right
		}
		answer, ok := rawAnswers[path]
		if !ok {
			answer = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"
		}
		io.WriteString(c, answer)
		if path == "/close" || path == "/eof" || path == "/http10" || path == "/bad" {
			return
		}
	}
}

// TestFramings: bodies are counted exactly whatever their framing, and
// connections are reused unless the response says otherwise.
func TestFramings(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		path     string
		method   string
		op       Op
		status   string
		bytes    uint64 // per request
		accepted int64  // connections for 10 requests over 2 workers
		redirect bool
	}{
		{"/chunked", "GET", OpGet, "200", 15, 2, false},
		{"/close", "GET", OpGet, "200", 3, 10, false},
		{"/eof", "GET", OpGet, "200", 13, 10, false},
		{"/http10", "GET", OpGet, "200", 2, 10, false},
		{"/head", "HEAD", OpStat, "200", 0, 2, false},
		{"/bad", "GET", OpGet, "net", 0, 10, false},
		{"/dir/loc", "GET", OpGet, "200", 15, 2, true},
	} {
		s := startRaw(t)
		r := newRunner(t, Options{URL: s.url, Concurrency: 2}, Spec{Name: tc.path, Op: tc.op, Method: tc.method, Paths: []string{tc.path}})
		res := r.Phase(ctx, Limits{Count: 10})
		if res.ByCode[tc.status] != 10 && !(tc.status == "200" && res.OK == 10) {
			t.Errorf("%s: %+v", tc.path, res)
		}
		if res.Bytes != 10*tc.bytes {
			t.Errorf("%s: %d bytes, want %d", tc.path, res.Bytes, 10*tc.bytes)
		}
		want := int64(10)
		if tc.redirect {
			want = 20
			if res.Redirects != 10 || s.resolved.Load() != 10 {
				t.Errorf("%s: %d redirects, %d to /dir/chunked", tc.path, res.Redirects, s.resolved.Load())
			}
		}
		if got := s.requests.Load(); got != want {
			t.Errorf("%s: server answered %d requests, want %d", tc.path, got, want)
		}
		if got := s.accepted.Load(); got != tc.accepted {
			t.Errorf("%s: %d connections, want %d", tc.path, got, tc.accepted)
		}
	}

	s := startRaw(t)
	r, err := NewRunner(Options{URL: s.url, Concurrency: 1}, Spec{Name: "put", Op: OpPut, Size: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w := r.workers[0]
	status, n, err := w.exchange("PUT", []byte("/continue"), "", 10)
	if err != nil || status != 201 || n != 10 {
		t.Errorf("100 Continue then 201: %d %d %v", status, n, err)
	}
}

// TestDiscardPastInt: a body is skipped in pieces an int holds on any
// platform, exactly: the byte after it is the next one read.
func TestDiscardPastInt(t *testing.T) {
	defer func(c int64) { discardChunk = c }(discardChunk)
	discardChunk = 7
	br := bufio.NewReaderSize(bytes.NewReader(append(make([]byte, 100), 'x')), 16)
	if n, err := discard(br, 100); n != 100 || err != nil {
		t.Fatalf("discard = %d, %v", n, err)
	}
	if b, err := br.ReadByte(); b != 'x' || err != nil {
		t.Fatalf("after the body: %q, %v", b, err)
	}
	if n, err := discard(br, 5); n != 0 || err == nil {
		t.Fatalf("past the end: %d, %v", n, err)
	}
}
