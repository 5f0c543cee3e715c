package bench

import (
	"net"
	"path"
	"strings"
	"sync"
	"testing"

	"github.com/valyala/fasthttp"
)

// davServer is a small real WebDAV-ish HTTP server on loopback that
// counts every request it answers per method and per status, keeps PUT
// bodies in memory, and answers by path:
//   - /err404/… → 404, /err500/… → 500 (for error classification),
//   - /r/… → GET 302, others 307, to redirectTo + "/…" (the rest of the path),
//   - otherwise HEAD/GET/PUT/MKCOL/PROPFIND/DELETE on its in-memory tree.
type davServer struct {
	t          *testing.T
	url        string
	redirectTo string

	mu       sync.Mutex
	byMethod map[string]int
	byStatus map[int]int
	files    map[string][]byte
	dirs     map[string]bool
	auth     map[string]int // Authorization header values seen
}

func startDAV(t *testing.T) *davServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &davServer{t: t, url: "http://" + ln.Addr().String()}
	s.reset()
	s.dirs = map[string]bool{"/": true}
	s.files = map[string][]byte{}
	srv := &fasthttp.Server{Handler: s.handle, MaxRequestBodySize: 256 << 20, DisablePreParseMultipartForm: true}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Shutdown() })
	return s
}

// reset forgets the counts (not the files).
func (s *davServer) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.byMethod = map[string]int{}
	s.byStatus = map[int]int{}
	s.auth = map[string]int{}
}

func (s *davServer) counts() (map[string]int, map[int]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, st := map[string]int{}, map[int]int{}
	for k, v := range s.byMethod {
		m[k] = v
	}
	for k, v := range s.byStatus {
		st[k] = v
	}
	return m, st
}

func (s *davServer) handle(ctx *fasthttp.RequestCtx) {
	method := string(ctx.Method())
	p := path.Clean(string(ctx.Path()))
	status := s.answer(ctx, method, p)
	ctx.SetStatusCode(status)
	s.mu.Lock()
	s.byMethod[method]++
	s.byStatus[status]++
	if a := ctx.Request.Header.Peek("Authorization"); len(a) > 0 {
		s.auth[string(a)]++
	}
	s.mu.Unlock()
}

func (s *davServer) answer(ctx *fasthttp.RequestCtx, method, p string) int {
	switch {
	case strings.HasPrefix(p, "/err404/"):
		return 404
	case strings.HasPrefix(p, "/err500/"):
		return 500
	case strings.HasPrefix(p, "/r/"):
		ctx.Response.Header.Set("Location", s.redirectTo+strings.TrimPrefix(p, "/r"))
		if method == "GET" || method == "HEAD" {
			return 302
		}
		return 307
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch method {
	case "HEAD", "GET":
		b, ok := s.files[p]
		if !ok {
			return 404
		}
		ctx.Response.SetBody(b)
		return 200
	case "PUT":
		if !s.dirs[path.Dir(p)] {
			return 409
		}
		s.files[p] = append([]byte(nil), ctx.Request.Body()...)
		return 201
	case "MKCOL":
		if s.dirs[p] || s.files[p] != nil {
			return 405
		}
		if !s.dirs[path.Dir(p)] {
			return 409
		}
		s.dirs[p] = true
		return 201
	case "PROPFIND":
		depth := string(ctx.Request.Header.Peek("Depth"))
		if depth != "0" && depth != "1" {
			return 403
		}
		_, isFile := s.files[p]
		if !isFile && !s.dirs[p] {
			return 404
		}
		var b strings.Builder
		b.WriteString(`<?xml version="1.0"?><D:multistatus xmlns:D="DAV:">`)
		b.WriteString("<D:response><D:href>" + p + "</D:href></D:response>")
		if depth == "1" && !isFile {
			for f := range s.files {
				if path.Dir(f) == p {
					b.WriteString("<D:response><D:href>" + f + "</D:href></D:response>")
				}
			}
		}
		b.WriteString("</D:multistatus>")
		ctx.Response.SetBodyString(b.String())
		return 207
	case "DELETE":
		delete(s.files, p)
		return 204
	}
	return 405
}

func (s *davServer) file(p string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.files[p]
	return b, ok
}
