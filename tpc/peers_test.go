package tpc

import (
	"context"
	"crypto/md5"
	"crypto/rand"
	"hash/adler32"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"shoal"
	"shoal/internal/testlog"
)

// The peers of these tests are real HTTP servers on loopback
// (internal/tpcpeer: a source that misbehaves on demand, a WebDAV-like
// destination), and the sink a real one over files: temp file, fsync,
// rename into place on commit.

func randomBytes(t testing.TB, n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

func sumsOf(b []byte) shoal.Sums {
	m := md5.Sum(b)
	return shoal.Sums{Adler32: adler32.Checksum(b), MD5: m[:]}
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

type logBuffer = testlog.Buffer

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
