package diskserver

import (
	"io"
	"io/fs"
	"os"
	"time"
)

// packObject is an open object in a pack.
type packObject struct {
	ps   *packSet
	e    *packed
	done bool
}

func (o *packObject) Size() int64 { return o.e.size }

func (o *packObject) ModTime() time.Time { return time.Unix(0, o.e.mtimeNs) }

func (o *packObject) ReadAt(b []byte, off int64) (int, error) {
	if off < 0 {
		return 0, &fs.PathError{Op: "readat", Path: "pack object", Err: fs.ErrInvalid}
	}
	if off >= o.e.size {
		return 0, io.EOF
	}
	var eof error
	if left := o.e.size - off; int64(len(b)) > left {
		b, eof = b[:left], io.EOF
	}
	n, err := o.e.p.f.ReadAt(b, o.e.off+recHeaderSize+off)
	if err == nil {
		err = eof
	}
	return n, err
}

// OSFile implements shoal.FileObject: the pack, and where in it the
// object's bytes start.
func (o *packObject) OSFile() (*os.File, int64) { return o.e.p.f, o.e.off + recHeaderSize }

// Close implements shoal.Object; a second Close does nothing.
func (o *packObject) Close() error {
	if !o.done {
		o.done = true
		o.ps.release(o.e)
	}
	return nil
}
