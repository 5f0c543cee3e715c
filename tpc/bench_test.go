package tpc

import (
	"bytes"
	"context"
	"crypto/md5"
	"hash/adler32"
	"io"
	"testing"

	"shoal"
	"shoal/internal/tpcpeer"
)

// BenchmarkPull: a pull of 64 MiB from a source on loopback into a sink
// that checksums as the data servers do (adler32 and md5) and keeps
// nothing: the client's own cost per byte.
func BenchmarkPull(b *testing.B) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 4<<20)
	src := tpcpeer.NewSource(b, data)
	c, _ := newTestClient(&testing.T{}, Options{})
	sink := Sink{
		Store: func(_ context.Context, body io.Reader, _ int64) (shoal.Sums, error) {
			ad, m := adler32.New(), md5.New()
			buf := make([]byte, 256<<10)
			if _, err := io.CopyBuffer(io.MultiWriter(ad, m), body, buf); err != nil {
				return shoal.Sums{}, err
			}
			return shoal.Sums{Adler32: ad.Sum32(), MD5: m.Sum(nil)}, nil
		},
		Commit: func(context.Context) error { return nil },
		Abort:  func() {},
	}
	r, _ := Parse(hdrs("Source", src.URL("/f/x")), nil)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if err := c.Pull(context.Background(), r, sink, &Progress{}); err != nil {
			b.Fatal(err)
		}
	}
}
