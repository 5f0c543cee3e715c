package bench

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/valyala/fasthttp"
)

// The disk ceiling is what a data server could at best create per second
// on this box when every create is durable: it answers PUT by making the
// body a file of its own and nothing else, the least a server that keeps
// a file per object does before its 201 (no catalog, no checksum, no
// name of the client's choosing). A file of shoal's own goes through the
// same steps (write, fsync, name, directory fsync), so at sizes stored
// that way shoal's ratio to it says how much of the disk's durable create
// rate it keeps; smaller files, which shoal packs or keeps in its
// catalog, may beat it. nginx, the usual comparison, does not fsync at
// all.

// diskCeilingBuf is the size of the pooled buffers bodies are copied
// through, as a data server's are.
const diskCeilingBuf = 256 << 10

var diskCeilingBufs = sync.Pool{New: func() any { b := make([]byte, diskCeilingBuf); return &b }}

// DiskCeilingHandler answers PUT with 201 once the body is a new file in
// dir, fsync'd, and dir fsync'd after it (500 if any step failed, the
// file removed). Other requests get the constant ceiling's answers.
func DiskCeilingHandler(dir string) fasthttp.RequestHandler {
	other := CeilingHandler(0)
	return func(ctx *fasthttp.RequestCtx) {
		if !ctx.IsPut() {
			other(ctx)
			return
		}
		if err := createDurable(dir, ctx); err != nil {
			ctx.SetStatusCode(500)
			return
		}
		ctx.SetStatusCode(201)
	}
}

// createDurable writes ctx's body into a new file in dir and makes both durable.
func createDurable(dir string, ctx *fasthttp.RequestCtx) (err error) {
	f, err := os.CreateTemp(dir, "put-*")
	if err != nil {
		discardBody(ctx)
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(f.Name())
		}
	}()
	if want := ctx.Request.Header.ContentLength(); want != 0 {
		bufp := diskCeilingBufs.Get().(*[]byte)
		defer diskCeilingBufs.Put(bufp)
		// A struct of f alone hides its ReadFrom, so the copy goes
		// through the buffer, in writes of its size.
		n, err := io.CopyBuffer(struct{ io.Writer }{f}, bodyOf(ctx), *bufp)
		if err != nil {
			return err
		}
		if want > 0 && n != int64(want) { // the stream ends early, without an error, when the client goes
			return io.ErrUnexpectedEOF
		}
	}
	if err := f.Sync(); err != nil {
		return err
	}
	d, err := os.Open(filepath.Clean(dir))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// bodyOf is the request body as it arrives, or as fasthttp read it whole.
func bodyOf(ctx *fasthttp.RequestCtx) io.Reader {
	if s := ctx.RequestBodyStream(); s != nil {
		return s
	}
	return bytes.NewReader(ctx.Request.Body())
}
