package tpc

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"shoal"
	"shoal/internal/testhttp"
	"shoal/internal/tpcpeer"
	"shoal/tlsconf"
)

// TestPull: the bytes arrive whole, the source's digest (from its GET,
// else from a HEAD with Want-Digest) is checked before the commit, the
// transfer headers reach the source as headers of their own, and the
// token in them reaches no log line.
func TestPull(t *testing.T) {
	data := randomBytes(t, 3<<20+17)
	src := tpcpeer.NewSource(t, data)
	c, logs := newTestClient(t, Options{})
	for _, path := range []string{"/f/x", "/headdigest/x"} {
		f := newFileSink(t)
		p := &Progress{}
		r := request(t, ModePull, src.URL(path), "TransferHeaderAuthorization", "Bearer SECRET-TOKEN", "TransferHeaderX-Trace", "abc")
		if err := c.Pull(context.Background(), r, f.sink(), p); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		got, err := os.ReadFile(f.final)
		if err != nil || !bytes.Equal(got, data) || !f.committed || p.Bytes() != int64(len(data)) {
			t.Fatalf("%s: %d bytes committed %v, progress %d", path, len(got), f.committed, p.Bytes())
		}
		if len(p.Connections()) == 0 || !strings.HasPrefix(p.Connections()[0], "tcp:127.0.0.1:") {
			t.Errorf("%s: connections %v", path, p.Connections())
		}
	}
	for _, h := range src.Seen() {
		if h.Get("Authorization") != "Bearer SECRET-TOKEN" || h.Get("X-Trace") != "abc" || h.Get("TransferHeaderAuthorization") != "" {
			t.Fatalf("the source saw %v", h)
		}
	}
	if strings.Contains(logs.String(), "SECRET-TOKEN") {
		t.Errorf("the token reached the log:\n%s", logs)
	}
}

// TestPullFailures: each way a pull can fail ends in a Failure whose
// reason says what went wrong, and leaves nothing: no commit, no file.
func TestPullFailures(t *testing.T) {
	data := randomBytes(t, 1<<20)
	src := tpcpeer.NewSource(t, data)
	c, _ := newTestClient(t, Options{IdleTimeout: 300 * time.Millisecond, FirstByteTimeout: 500 * time.Millisecond})
	cases := []struct {
		path   string
		h      []string
		kind   shoal.Kind
		reason string
	}{
		{"/404/x", nil, shoal.KindNotFound, "answered 404 Not Found: no such file"},
		{"/lie/x", nil, shoal.KindCorrupt, "adler32 mismatch"},
		{"/nodigest/x", nil, shoal.KindCorrupt, "RequireChecksumVerification: false"},
		{"/cut/x", nil, shoal.KindUnavailable, "broke off"},
		{"/stall/x", nil, shoal.KindTimeout, "idle timeout"},
		{"/late/x", nil, shoal.KindUnavailable, "first-byte timeout"},
		{"/big/x", nil, shoal.KindInsufficient, "no room"},
	}
	for _, tc := range cases {
		f := newFileSink(t)
		s := f.sink()
		if tc.path == "/big/x" {
			store := s.Store
			s.Store = func(ctx context.Context, body io.Reader, size int64) (shoal.Sums, error) {
				if size > 1<<40 {
					return shoal.Sums{}, shoal.Errorf("store", shoal.KindInsufficient, "no room for %d bytes", size)
				}
				return store(ctx, body, size)
			}
		}
		r := request(t, ModePull, src.URL(tc.path), tc.h...)
		err := c.Pull(context.Background(), r, s, &Progress{})
		if !shoal.IsKind(err, tc.kind) || !strings.Contains(ReasonOf(err), tc.reason) {
			t.Errorf("%s: %v (kind %v), want %v naming %q", tc.path, err, shoal.KindOf(err), tc.kind, tc.reason)
		}
		if f.committed || len(f.files(t)) != 0 {
			t.Errorf("%s: committed %v, left %v", tc.path, f.committed, f.files(t))
		}
	}
	// Without verification a source with no digest is copied; a lying one is not.
	f := newFileSink(t)
	if err := c.Pull(context.Background(), request(t, ModePull, src.URL("/nodigest/x"), "RequireChecksumVerification", "false"), f.sink(), &Progress{}); err != nil || !f.committed {
		t.Errorf("no digest, no verification: %v", err)
	}
	f = newFileSink(t)
	if err := c.Pull(context.Background(), request(t, ModePull, src.URL("/lie/x"), "RequireChecksumVerification", "false"), f.sink(), &Progress{}); err == nil || f.committed {
		t.Errorf("a lying digest without verification: %v", err)
	}
	// A cancelled pull (the client hung up) stores nothing.
	f = newFileSink(t)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(100 * time.Millisecond); cancel() }()
	if err := c.Pull(ctx, request(t, ModePull, src.URL("/stall/x")), f.sink(), &Progress{}); err == nil || f.committed || len(f.files(t)) != 0 {
		t.Errorf("cancelled: %v, left %v", err, f.files(t))
	}
}

// TestPullGuarded: with the guard on, a source on loopback is never
// contacted, nor is one whose name resolves there.
func TestPullGuarded(t *testing.T) {
	src := tpcpeer.NewSource(t, []byte("secret metadata"))
	c, _ := newTestClient(t, Options{Deny: []string{}}) // a deny list, so the guard stays on
	for _, u := range []string{src.URL("/f/x"), strings.Replace(src.URL("/f/x"), "127.0.0.1", "localhost", 1)} {
		f := newFileSink(t)
		err := c.Pull(context.Background(), request(t, ModePull, u), f.sink(), &Progress{})
		if !shoal.IsKind(err, shoal.KindPermission) || !strings.Contains(ReasonOf(err), "loopback") {
			t.Errorf("%s: %v", u, err)
		}
		if _, err := c.Stat(context.Background(), request(t, ModePull, u)); !shoal.IsKind(err, shoal.KindPermission) {
			t.Errorf("Stat %s: %v", u, err)
		}
	}
	if n := len(src.Seen()); n != 0 {
		t.Errorf("the source got %d requests", n)
	}
}

// TestPullHeld: with a Store that commits when its body ends (md's proxy
// mode), the pull checks the digest before the body's last byte: a
// mismatch or a cut source breaks the body, a good one passes whole.
func TestPullHeld(t *testing.T) {
	data := randomBytes(t, 1<<20+3)
	src := tpcpeer.NewSource(t, data)
	c, _ := newTestClient(t, Options{})
	for _, tc := range []struct {
		path string
		ok   bool
	}{{"/f/x", true}, {"/headdigest/x", true}, {"/lie/x", false}, {"/cut/x", false}} {
		var got []byte
		var storeErr error
		sink := Sink{Store: func(_ context.Context, body io.Reader, size int64) (shoal.Sums, error) {
			got, storeErr = io.ReadAll(body)
			return shoal.Sums{}, storeErr
		}}
		err := c.Pull(context.Background(), request(t, ModePull, src.URL(tc.path)), sink, &Progress{})
		if tc.ok {
			if err != nil || !bytes.Equal(got, data) {
				t.Errorf("%s: %v, %d bytes", tc.path, err, len(got))
			}
			continue
		}
		if err == nil || storeErr == nil || len(got) >= len(data) {
			t.Errorf("%s: %v; the store read %d of %d bytes and %v", tc.path, err, len(got), len(data), storeErr)
		}
	}
}

// TestPush: through a 302 and a 307 (each answered before the body: the
// body is sent once, to the final URL), checked by a HEAD with
// Want-Digest; with Overwrite: F an existing file is not replaced.
func TestPush(t *testing.T) {
	data := randomBytes(t, 2<<20+5)
	d := tpcpeer.NewDest(t)
	c, logs := newTestClient(t, Options{})
	src := Source{Size: int64(len(data)), Sums: sumsOf(data), Open: func(context.Context) (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}}
	p := &Progress{}
	for _, path := range []string{"/a", "/redir/b"} {
		if err := c.Push(context.Background(), request(t, ModePush, d.URL(path), "TransferHeaderAuthorization", "Bearer PUSH-TOKEN"), src, p); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if got, _ := d.File(path); !bytes.Equal(got, data) {
			t.Fatalf("%s: %d bytes stored", path, len(got))
		}
	}
	puts, bodies, headers, _ := d.Stats()
	if puts["/redir/b"] != 1 || puts["/redir/b?at=hop"] != 1 || puts["/redir/b?at=final"] != 1 || bodies != 2 {
		t.Errorf("PUTs along the redirects: %v, bodies read %d", puts, bodies)
	}
	for _, h := range headers {
		if h.Get("Authorization") != "Bearer PUSH-TOKEN" {
			t.Errorf("the destination saw %v", h)
		}
	}
	if err := c.Push(context.Background(), request(t, ModePush, d.URL("/a"), "Overwrite", "F"), src, p); !shoal.IsKind(err, shoal.KindPrecondition) {
		t.Errorf("Overwrite: F onto an existing file: %v", err)
	}
	if strings.Contains(logs.String(), "PUSH-TOKEN") {
		t.Errorf("the token reached the log:\n%s", logs)
	}
}

// TestPushChecks: a destination whose digest disagrees, or that gives
// none when verification is asked for, gets its file DELETEd and the
// push fails; so does a file here whose bytes fail their own checksum.
// A token is not sent to another host a redirect names.
func TestPushChecks(t *testing.T) {
	data := randomBytes(t, 1<<20)
	d := tpcpeer.NewDest(t)
	c, _ := newTestClient(t, Options{})
	open := func(context.Context) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
	good := Source{Size: int64(len(data)), Sums: sumsOf(data), Open: open}
	for _, tc := range []struct {
		path   string
		src    Source
		h      []string
		reason string
	}{
		{"/lie/f", good, nil, "adler32 mismatch"},
		{"/nodigest/f", good, nil, "RequireChecksumVerification: false"},
		{"/corrupt", Source{Size: good.Size, Sums: shoal.Sums{Adler32: 7}, Open: open}, nil, "does not match its checksum"},
	} {
		err := c.Push(context.Background(), request(t, ModePush, d.URL(tc.path), tc.h...), tc.src, &Progress{})
		if !shoal.IsKind(err, shoal.KindCorrupt) || !strings.Contains(ReasonOf(err), tc.reason) {
			t.Errorf("%s: %v", tc.path, err)
		}
		if _, ok := d.File(tc.path); ok {
			t.Errorf("%s: left on the destination", tc.path)
		}
	}
	if err := c.Push(context.Background(), request(t, ModePush, d.URL("/nodigest/g"), "RequireChecksumVerification", "false"), good, &Progress{}); err != nil {
		t.Errorf("no digest, no verification: %v", err)
	}

	if err := c.Push(context.Background(), request(t, ModePush, d.URL("/elsewhere/h"), "TransferHeaderAuthorization", "Bearer T", "RequireChecksumVerification", "false"), good, &Progress{}); err != nil {
		t.Fatal(err)
	}
	_, _, headers, _ := d.Stats()
	last := headers[len(headers)-2] // the PUT to localhost, before the HEAD
	if last.Get("Authorization") != "" {
		t.Errorf("the token followed a redirect to another host: %v", last)
	}
}

// TestPushUnverified: without RequireChecksumVerification only the
// digest comparison is skipped. A destination that answers 201 to the PUT
// and then 404 to the HEAD (it kept nothing), one whose HEAD fails, and
// one that kept a different size fail the push (the last DELETEd); one
// that refuses HEAD (405) leaves the PUT's 201 to stand, unless
// verification is asked for.
func TestPushUnverified(t *testing.T) {
	data := randomBytes(t, 64<<10)
	d := tpcpeer.NewDest(t)
	c, _ := newTestClient(t, Options{})
	open := func(context.Context) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
	src := Source{Size: int64(len(data)), Sums: sumsOf(data), Open: open}
	noVerify := []string{"RequireChecksumVerification", "false"}
	for _, tc := range []struct {
		path   string
		h      []string
		kind   shoal.Kind
		reason string
	}{
		{"/lose/f", noVerify, shoal.KindNotFound, "answered 404 Not Found: the file is not there after its PUT"},
		{"/lose/g", nil, shoal.KindNotFound, "answered 404 Not Found: the file is not there after its PUT"},
		{"/headfail/f", noVerify, shoal.KindUnavailable, "answered 503"},
		{"/short/f", noVerify, shoal.KindCorrupt, "has 65535 bytes after the copy, this file 65536"},
		{"/nohead/g", nil, shoal.KindUnavailable, "answered 405"},
	} {
		err := c.Push(context.Background(), request(t, ModePush, d.URL(tc.path), tc.h...), src, &Progress{})
		if !shoal.IsKind(err, tc.kind) || !strings.Contains(ReasonOf(err), tc.reason) {
			t.Errorf("%s %v: %v", tc.path, tc.h, err)
		}
		if _, ok := d.File(tc.path); ok {
			t.Errorf("%s: left on the destination", tc.path)
		}
	}
	if _, _, _, deletes := d.Stats(); !slices.Contains(deletes, "/short/f") {
		t.Errorf("the short file was not DELETEd: %v", deletes)
	}
	if err := c.Push(context.Background(), request(t, ModePush, d.URL("/nohead/f"), noVerify...), src, &Progress{}); err != nil {
		t.Errorf("a destination without HEAD, no verification: %v", err)
	}
	if got, _ := d.File("/nohead/f"); !bytes.Equal(got, data) {
		t.Errorf("/nohead/f: %d bytes stored", len(got))
	}
}

// TestTLSRoots: an https peer signed by a private CA is refused until the
// CA is configured, as a file or as a directory of hashed names.
func TestTLSRoots(t *testing.T) {
	srv, caPEM := tlsSource(t, []byte("over tls"))
	dir := t.TempDir()
	caFile := filepath.Join(dir, "ca.pem")
	os.WriteFile(caFile, caPEM, 0o600)
	hashed := filepath.Join(dir, "certificates")
	os.Mkdir(hashed, 0o700)
	os.WriteFile(filepath.Join(hashed, "0a1b2c3d.0"), caPEM, 0o600)
	for _, tc := range []struct {
		opts Options
		ok   bool
	}{{Options{}, false}, {Options{CAFiles: []string{caFile}}, true}, {Options{CADirs: []string{hashed}}, true}} {
		c, _ := newTestClient(t, tc.opts)
		f := newFileSink(t)
		err := c.Pull(context.Background(), request(t, ModePull, srv+"/f/x"), f.sink(), &Progress{})
		if (err == nil) != tc.ok {
			t.Errorf("%+v: %v", tc.opts, err)
		}
	}
	if _, err := New(Options{CADirs: []string{t.TempDir()}}); err == nil {
		t.Error("an empty CA directory accepted")
	}
}

// TestCADirHashCollision: two CAs whose subjects hash alike sit in a
// CA directory as HASH.0 and HASH.1 (OpenSSL's c_rehash numbering); a
// client given the directory trusts a peer signed by either.
func TestCADirHashCollision(t *testing.T) {
	hashed := t.TempDir()
	var srcs []string
	for i := range 2 {
		ca, err := tlsconf.NewCA("one name for two CAs")
		if err != nil {
			t.Fatal(err)
		}
		h, err := tlsconf.SubjectHash(ca.Cert)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(hashed, fmt.Sprintf("%s.%d", h, i)), ca.CertPEM, 0o600)
		srcs = append(srcs, tpcpeer.NewSourceTLS(t, []byte("over tls"), testhttp.ServerTLS(t, ca)).URL(""))
	}
	os.WriteFile(filepath.Join(hashed, "0a1b2c3d.r0"), []byte("a CRL, not a certificate"), 0o600)
	c, _ := newTestClient(t, Options{CADirs: []string{hashed}})
	for i, src := range srcs {
		f := newFileSink(t)
		if err := c.Pull(context.Background(), request(t, ModePull, src+"/f/x"), f.sink(), &Progress{}); err != nil {
			t.Errorf("peer signed by the CA in HASH.%d: %v", i, err)
		}
	}
}

// TestPullStreams: with X-Number-Of-Streams, a source that serves ranges
// is fetched in parallel Range GETs put back in order (the bytes and the
// digest as from one GET); a source that does not serves it whole; one
// that answers the wrong range fails the copy, leaving nothing.
func TestPullStreams(t *testing.T) {
	data := randomBytes(t, 5*rangeChunk+12345)
	src := tpcpeer.NewSource(t, data)
	src.RangeDelay = 100 * time.Millisecond // ranges in flight together overlap
	c, _ := newTestClient(t, Options{})
	for _, path := range []string{"/ranges/x", "/f/x"} {
		f := newFileSink(t)
		p := &Progress{}
		before := len(src.Seen())
		if err := c.Pull(context.Background(), request(t, ModePull, src.URL(path), "X-Number-Of-Streams", "4"), f.sink(), p); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		got, _ := os.ReadFile(f.final)
		if !bytes.Equal(got, data) || p.Bytes() != int64(len(data)) {
			t.Fatalf("%s: %d bytes, progress %d", path, len(got), p.Bytes())
		}
		ranges := 0
		for _, h := range src.Seen()[before:] {
			if h.Get("Range") != "" {
				ranges++
			}
		}
		if want := map[string]int{"/ranges/x": 6, "/f/x": 1}[path]; ranges != want {
			t.Errorf("%s: %d Range requests, want %d", path, ranges, want)
		}
		if path == "/ranges/x" && src.MaxInFlight() < 2 {
			t.Errorf("%s: at most %d requests at once", path, src.MaxInFlight())
		}
	}
	f := newFileSink(t)
	err := c.Pull(context.Background(), request(t, ModePull, src.URL("/rangelie/x"), "X-Number-Of-Streams", "3"), f.sink(), &Progress{})
	if !shoal.IsKind(err, shoal.KindCorrupt) || !strings.Contains(ReasonOf(err), "Content-Range") || f.committed || len(f.files(t)) != 0 {
		t.Errorf("a source answering the wrong range: %v, left %v", err, f.files(t))
	}
	if parallelism(&Request{Streams: 100}, 1<<40) != maxParallel || parallelism(&Request{Streams: 4}, rangeChunk) != 1 || parallelism(&Request{Streams: 0}, 1<<30) != 1 {
		t.Error("parallelism")
	}
}
