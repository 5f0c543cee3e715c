// Package tpcpeer holds the other side of third-party copies for tests:
// real HTTP servers on loopback — a source that serves a file and
// misbehaves on demand, and a WebDAV-like destination — that md, data
// server, gw, tpc and e2e tests copy from and to.
package tpcpeer

import (
	"bytes"
	"crypto/md5"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"hash/adler32"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// DigestOf is b's Digest header as RFC 3230 spells it.
func DigestOf(b []byte) string {
	m := md5.Sum(b)
	return fmt.Sprintf("adler32=%08x,md5=%s", adler32.Checksum(b), base64.StdEncoding.EncodeToString(m[:]))
}

// Source serves Data, with a behaviour chosen by the path's first
// segment (the rest of the path is free, so one source serves many
// files):
//
//	/f/…         Digest on GET and HEAD (when asked with Want-Digest)
//	/nodigest/…  no Digest
//	/headdigest/… Digest on HEAD only
//	/lie/…       a wrong Digest
//	/cut/…       half the body, then the connection closes
//	/stall/…     half the body, then nothing until the client goes
//	/slow/…      the body at Rate bytes a second (Digest given)
//	/late/…      the answer after 2 s
//	/big/…       a Content-Length of 1 PiB
//	/404/…       404 with a text reason
//	/getonly/…   HEAD refused with 403 (a URL pre-signed for GET), Digest on GET
//	/ranges/…    Range requests served (206), Digest given
//	/rangelie/…  Range requests answered with the wrong range past the first
type Source struct {
	Data []byte
	Rate int64 // of /slow, bytes per second
	// RangeDelay is how long /ranges/ waits before answering a request
	// with Range (so that parallel ranges overlap).
	RangeDelay time.Duration

	srv     *httptest.Server
	mu      sync.Mutex
	headers []http.Header
	methods []string
	digest  string // of Data, once computed

	inflight, maxInflight int // requests being served, and the most at once
}

// MaxInFlight is the most requests the source served at once.
func (s *Source) MaxInFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxInflight
}

// digestOfData is DigestOf(s.Data), computed once.
func (s *Source) digestOfData() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.digest == "" {
		s.digest = DigestOf(s.Data)
	}
	return s.digest
}

// NewSource starts a source of data on loopback, closed when t ends.
func NewSource(t testing.TB, data []byte) *Source {
	s := &Source{Data: data, Rate: 64 << 20}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// NewSourceTLS is NewSource serving https with cfg.
func NewSourceTLS(t testing.TB, data []byte, cfg *tls.Config) *Source {
	s := &Source{Data: data, Rate: 64 << 20}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.srv.Config.ErrorLog = log.New(io.Discard, "", 0) // handshakes refused on purpose
	s.srv.TLS = cfg
	s.srv.StartTLS()
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the source's base URL followed by p.
func (s *Source) URL(p string) string { return s.srv.URL + p }

// Seen are the headers of every request so far.
func (s *Source) Seen() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]http.Header(nil), s.headers...)
}

// Methods are the methods of every request so far.
func (s *Source) Methods() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.methods...)
}

func (s *Source) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.headers = append(s.headers, r.Header.Clone())
	s.methods = append(s.methods, r.Method)
	s.inflight++
	s.maxInflight = max(s.maxInflight, s.inflight)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inflight--
		s.mu.Unlock()
	}()
	kind, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	want := r.Header.Get("Want-Digest") != ""
	switch kind {
	case "404":
		http.Error(w, "no such file\nsecond line", http.StatusNotFound)
		return
	case "late":
		time.Sleep(2 * time.Second)
	case "getonly":
		if r.Method == http.MethodHead {
			w.WriteHeader(http.StatusForbidden)
			return
		}
	case "big":
		w.Header().Set("Content-Length", strconv.FormatInt(1<<50, 10))
		w.WriteHeader(http.StatusOK)
		if r.Method != http.MethodHead {
			w.Write(s.Data)
		}
		return
	}
	if want {
		switch kind {
		case "f", "cut", "stall", "late", "slow", "ranges", "rangelie", "getonly":
			w.Header().Set("Digest", s.digestOfData())
		case "headdigest":
			if r.Method == http.MethodHead {
				w.Header().Set("Digest", s.digestOfData())
			}
		case "lie":
			w.Header().Set("Digest", "adler32=00000001")
		}
	}
	switch kind {
	case "rangelie":
		if rg := r.Header.Get("Range"); rg != "" && !strings.HasPrefix(rg, "bytes=0-") {
			r.Header.Set("Range", "bytes=0-9")
		}
		fallthrough
	case "ranges":
		if r.Header.Get("Range") != "" && s.RangeDelay > 0 {
			time.Sleep(s.RangeDelay)
		}
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(s.Data))
		return
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(s.Data)))
	if r.Method == http.MethodHead {
		return
	}
	switch kind {
	case "cut", "stall":
		w.Write(s.Data[:len(s.Data)/2])
		w.(http.Flusher).Flush()
		if kind == "stall" {
			<-r.Context().Done()
			return
		}
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			conn.Close()
		}
	case "slow":
		s.writeSlowly(w, r)
	default:
		w.Write(s.Data)
	}
}

// writeSlowly sends Data at Rate, in chunks of a tenth of a second.
func (s *Source) writeSlowly(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	chunk := max(int(s.Rate/10), 1)
	for off := 0; off < len(s.Data); off += chunk {
		end := min(off+chunk, len(s.Data))
		if _, err := w.Write(s.Data[off:end]); err != nil {
			return
		}
		w.(http.Flusher).Flush()
		due := start.Add(time.Duration(float64(end) / float64(s.Rate) * float64(time.Second)))
		select {
		case <-time.After(time.Until(due)):
		case <-r.Context().Done():
			return
		}
	}
}

// Dest is a WebDAV-like destination: PUT stores a body received whole
// (If-None-Match: * honoured), HEAD gives Content-Length and, asked with
// Want-Digest, Digest; DELETE removes. By path: a PUT to /redir/… is
// answered 302 to ?at=hop, that one 307 to ?at=final, each before the
// body is read; /lie/… gives a wrong Digest; /nodigest/… none;
// /elsewhere/… redirects a PUT to the same server named localhost (and
// answers HEAD with the file stored there); /lose/…
// answers 201 and keeps nothing; /short/… keeps all but the last byte;
// /nohead/… answers HEAD 405, /headfail/… HEAD 503.
type Dest struct {
	srv *httptest.Server

	mu      sync.Mutex
	files   map[string][]byte
	puts    map[string]int // PUT requests per path and query
	bodies  int            // PUT bodies received whole
	headers []http.Header
	deletes []string
}

// NewDest starts a destination on loopback, closed when t ends.
func NewDest(t testing.TB) *Dest {
	d := &Dest{files: map[string][]byte{}, puts: map[string]int{}}
	d.srv = httptest.NewServer(http.HandlerFunc(d.serve))
	t.Cleanup(d.srv.Close)
	return d
}

// URL is the destination's base URL followed by p.
func (d *Dest) URL(p string) string { return d.srv.URL + p }

// File is what the destination holds at path p.
func (d *Dest) File(p string) ([]byte, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	b, ok := d.files[p]
	return b, ok
}

// Put stores b at p, as if a client had.
func (d *Dest) Put(p string, b []byte) {
	d.mu.Lock()
	d.files[p] = b
	d.mu.Unlock()
}

// Stats are the PUTs per request URI, the bodies received whole, the
// headers of every request and the paths DELETEd.
func (d *Dest) Stats() (puts map[string]int, bodies int, headers []http.Header, deletes []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	puts = map[string]int{}
	for k, v := range d.puts {
		puts[k] = v
	}
	return puts, d.bodies, append([]http.Header(nil), d.headers...), append([]string(nil), d.deletes...)
}

func (d *Dest) serve(w http.ResponseWriter, r *http.Request) {
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
		if _, exists := d.File(p); exists && r.Header.Get("If-None-Match") == "*" {
			http.Error(w, "exists", http.StatusPreconditionFailed)
			return
		}
		b, err := io.ReadAll(r.Body)
		if err != nil || int64(len(b)) != r.ContentLength {
			return
		}
		if strings.HasPrefix(p, "/short/") && len(b) > 0 {
			b = b[:len(b)-1]
		}
		d.mu.Lock()
		if !strings.HasPrefix(p, "/lose/") {
			d.files[p] = b
		}
		d.bodies++
		d.mu.Unlock()
		w.WriteHeader(http.StatusCreated)
	case http.MethodHead:
		switch {
		case strings.HasPrefix(p, "/nohead/"):
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		case strings.HasPrefix(p, "/headfail/"):
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		if rest, ok := strings.CutPrefix(p, "/elsewhere/"); ok {
			p = "/" + rest
		}
		b, ok := d.File(p)
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		if r.Header.Get("Want-Digest") != "" && !strings.HasPrefix(p, "/nodigest/") {
			if strings.HasPrefix(p, "/lie/") {
				w.Header().Set("Digest", "adler32=00000001")
			} else {
				w.Header().Set("Digest", DigestOf(b))
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
