package tpc

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"hash/adler32"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"shoal"
)

// The peers of these tests are real HTTP servers on loopback (a source
// that misbehaves on demand, a WebDAV-like destination), and the sink a
// real one over files: temp file, fsync, rename into place on commit.

func randomBytes(t testing.TB, n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

func digestOf(b []byte) string {
	m := md5.Sum(b)
	return fmt.Sprintf("adler32=%08x,md5=%s", adler32.Checksum(b), base64.StdEncoding.EncodeToString(m[:]))
}

func sumsOf(b []byte) shoal.Sums {
	m := md5.Sum(b)
	return shoal.Sums{Adler32: adler32.Checksum(b), MD5: m[:]}
}

// source serves data at /f with behaviours chosen by path:
// /f: Digest on GET and HEAD (with Want-Digest); /nodigest: none;
// /headdigest: on HEAD only; /lie: a wrong one; /cut: half the body,
// then the connection closes; /stall: half the body, then nothing;
// /late: the answer comes after 2 s; /big: a huge Content-Length.
type source struct {
	data []byte
	srv  *httptest.Server

	mu      sync.Mutex
	headers []http.Header // of every request
}

func newSource(t *testing.T, data []byte) *source {
	s := &source{data: data}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *source) url(p string) string { return s.srv.URL + p }

func (s *source) seen() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]http.Header(nil), s.headers...)
}

func (s *source) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.headers = append(s.headers, r.Header.Clone())
	s.mu.Unlock()
	want := r.Header.Get("Want-Digest") != ""
	switch r.URL.Path {
	case "/404":
		http.Error(w, "no such file\nsecond line", http.StatusNotFound)
		return
	case "/late":
		time.Sleep(2 * time.Second)
	case "/big":
		w.Header().Set("Content-Length", strconv.FormatInt(1<<50, 10))
		w.WriteHeader(200)
		w.Write(s.data)
		return
	}
	if want {
		switch r.URL.Path {
		case "/f", "/cut", "/stall", "/late":
			w.Header().Set("Digest", digestOf(s.data))
		case "/headdigest":
			if r.Method == http.MethodHead {
				w.Header().Set("Digest", digestOf(s.data))
			}
		case "/lie":
			w.Header().Set("Digest", "adler32=00000001")
		}
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(s.data)))
	if r.Method == http.MethodHead {
		return
	}
	switch r.URL.Path {
	case "/cut", "/stall":
		w.Write(s.data[:len(s.data)/2])
		w.(http.Flusher).Flush()
		if r.URL.Path == "/stall" {
			<-r.Context().Done()
			return
		}
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
		return
	}
	w.Write(s.data)
}

// fileSink is the ordinary upload path in miniature: a temp file hashed
// as it is written, renamed into place by Commit.
type fileSink struct {
	dir, final string
	tmp        string
	committed  bool
	aborted    bool
}

func newFileSink(t *testing.T) *fileSink {
	d := t.TempDir()
	return &fileSink{dir: d, final: filepath.Join(d, "final")}
}

func (f *fileSink) sink() Sink {
	return Sink{
		Store: func(ctx context.Context, body io.Reader, size int64) (shoal.Sums, error) {
			tf, err := os.CreateTemp(f.dir, "tmp-*")
			if err != nil {
				return shoal.Sums{}, err
			}
			f.tmp = tf.Name()
			ad, m := adler32.New(), md5.New()
			_, err = io.Copy(io.MultiWriter(tf, ad, m), body)
			if err == nil {
				err = tf.Sync()
			}
			tf.Close()
			if err != nil {
				os.Remove(f.tmp)
				return shoal.Sums{}, shoal.E("store", shoal.KindInvalid, err)
			}
			return shoal.Sums{Adler32: ad.Sum32(), MD5: m.Sum(nil)}, nil
		},
		Commit: func(context.Context) error {
			f.committed = true
			return os.Rename(f.tmp, f.final)
		},
		Abort: func() {
			f.aborted = true
			os.Remove(f.tmp)
		},
	}
}

// files lists what the sink left in its directory.
func (f *fileSink) files(t *testing.T) []string {
	ents, err := os.ReadDir(f.dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// dest is a WebDAV-like destination: PUT (temp then rename: a cut body
// stores nothing; If-None-Match: * honoured), HEAD with Digest, DELETE.
// A PUT to /redir/… is answered 302 to ?at=hop, that one 307 to
// ?at=final, each before reading the body; /lie/… gives a wrong Digest;
// /nodigest/… none; /elsewhere/… redirects to the same server named
// localhost.
type dest struct {
	srv *httptest.Server

	mu      sync.Mutex
	files   map[string][]byte
	puts    map[string]int // PUT requests per path and query, bodies read or not
	bodies  int            // PUT bodies read in full
	headers []http.Header
	deletes []string
}

func newDest(t *testing.T) *dest {
	d := &dest{files: map[string][]byte{}, puts: map[string]int{}}
	d.srv = httptest.NewServer(http.HandlerFunc(d.serve))
	t.Cleanup(d.srv.Close)
	return d
}

func (d *dest) url(p string) string { return d.srv.URL + p }

func (d *dest) file(p string) ([]byte, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	b, ok := d.files[p]
	return b, ok
}

func (d *dest) serve(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	d.headers = append(d.headers, r.Header.Clone())
	if r.Method == http.MethodPut {
		d.puts[r.URL.RequestURI()]++
	}
	d.mu.Unlock()
	p := r.URL.Path
	switch r.Method {
	case http.MethodPut:
		if strings.HasPrefix(p, "/redir/") {
			switch r.URL.RawQuery {
			case "":
				http.Redirect(w, r, p+"?at=hop", http.StatusFound)
				return
			case "at=hop":
				http.Redirect(w, r, p+"?at=final", http.StatusTemporaryRedirect)
				return
			}
		}
		if rest, ok := strings.CutPrefix(p, "/elsewhere/"); ok {
			w.Header().Set("Location", strings.Replace(d.srv.URL, "127.0.0.1", "localhost", 1)+"/"+rest)
			w.WriteHeader(http.StatusTemporaryRedirect)
			return
		}
		if _, exists := d.file(p); exists && r.Header.Get("If-None-Match") == "*" {
			http.Error(w, "exists", http.StatusPreconditionFailed)
			return
		}
		b, err := io.ReadAll(r.Body)
		if err != nil || int64(len(b)) != r.ContentLength {
			return
		}
		d.mu.Lock()
		d.files[p] = b
		d.bodies++
		d.mu.Unlock()
		w.WriteHeader(http.StatusCreated)
	case http.MethodHead:
		b, ok := d.file(p)
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		if r.Header.Get("Want-Digest") != "" && !strings.HasPrefix(p, "/nodigest/") {
			if strings.HasPrefix(p, "/lie/") {
				w.Header().Set("Digest", "adler32=00000001")
			} else {
				w.Header().Set("Digest", digestOf(b))
			}
		}
	case http.MethodDelete:
		d.mu.Lock()
		delete(d.files, p)
		d.deletes = append(d.deletes, p)
		d.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

// logBuffer collects a client's log lines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// newTestClient is a client that may reach loopback (the peers live
// there), with opts' timeouts, logging into the returned buffer.
func newTestClient(t *testing.T, opts Options) (*Client, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	if !opts.AllowLocal && opts.Deny == nil {
		opts.AllowLocal = true
	}
	opts.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return c, logs
}

func request(t *testing.T, mode Mode, remote string, h ...string) *Request {
	t.Helper()
	name := "Source"
	if mode == ModePush {
		name = "Destination"
	}
	r, err := Parse(append(hdrs(name, remote), hdrs(h...)...), nil)
	if err != nil || r == nil || r.Mode != mode {
		t.Fatalf("Parse: %+v %v", r, err)
	}
	return r
}
