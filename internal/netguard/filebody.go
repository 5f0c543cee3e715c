package netguard

import (
	"io"
	"os"
)

// FileBody is a response body of n bytes of a file from an offset, read
// only at offsets (pread; sendfile(2) with an offset on a connection from
// a Listener), never through the file's position: the file may be shared
// by other requests sending it at the same time (diskserver keeps
// objects' files open for all their readers). Closing the body closes
// what NewFileBody was given to close, not the file.
type FileBody struct {
	f     *os.File
	off   int64 // where the next byte comes from
	left  int64 // bytes still to send
	close io.Closer
}

// NewFileBody is the n bytes of f from off; c (may be nil) is closed
// with the body.
func NewFileBody(f *os.File, off, n int64, c io.Closer) *FileBody {
	return &FileBody{f: f, off: off, left: n, close: c}
}

// Read reads at the body's offset (fasthttp fills its write buffer
// behind the header with it, and a connection that cannot sendfile
// copies through it).
func (b *FileBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.f.ReadAt(p, b.off)
	b.off += int64(n)
	b.left -= int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

// Close closes what the body was given to close.
func (b *FileBody) Close() error {
	if b.close == nil {
		return nil
	}
	return b.close.Close()
}

// sent records n bytes sent from the body by sendfile.
func (b *FileBody) sent(n int64) {
	b.off += n
	b.left -= n
}
