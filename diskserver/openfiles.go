package diskserver

import (
	"os"
	"sync"
	"time"
)

// openFiles keeps the files of recently read objects open, shared by
// their readers, so that a GET of an object read before costs an fstat
// instead of an open, an fstat and a close (the open and close were a
// sixth of what serving a 64 KiB object cost md in `shoal all`; nginx's
// open_file_cache does the same). An object never changes once created,
// so an open file is its content: readers use it only at explicit
// offsets (pread, sendfile with an offset), never its position. Remove
// drops an object's entry (its file is closed when its last reader is
// done, which frees its space). Every open of a kept file checks with one
// stat of the object's name (relative to the held objects/ directory:
// statName) that the name still leads to that file: a file deleted or
// replaced behind the store's back (a lost disk, an operator, a scrub
// test) is dropped and the object opened by name again, so readers see
// the disk as it is, as without the cache. A still-staged name (a link to
// the same file) does not count. Files are kept on Linux only (other
// platforms open by name every time).
type openFiles struct {
	mu       sync.Mutex
	m        map[string]*handle
	max      int    // entries kept; beyond, idle ones are closed
	removals uint64 // Removes so far: an open that straddles one is not kept
}

// maxOpenFiles is how many objects' files a store keeps open: one
// descriptor each, far below the process's limit (Go raises the soft
// limit to the hard one, and netguard caps connections at 2,048 by
// default).
const maxOpenFiles = 1024

// handle is one object's open file.
type handle struct {
	f    *os.File
	d    *disk   // where it was opened
	key  fileKey // which file it is
	refs int     // readers holding it; under openFiles.mu
	kept bool    // in the map; once out, the last reader closes it
}

func newOpenFiles(max int) *openFiles {
	return &openFiles{m: make(map[string]*handle), max: max}
}

// get returns id's kept handle with one more reader, or nil and the
// removal count to give add.
func (o *openFiles) get(id string) (*handle, uint64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	h := o.m[id]
	if h == nil {
		return nil, o.removals
	}
	h.refs++
	return h, 0
}

// add keeps h (just opened, with its one reader) under id, unless a
// Remove ran since get (the file may be one that Remove unlinked) or
// another reader kept id first (then h is closed and theirs returned).
// Full, it first closes idle entries, an eighth of max of them.
func (o *openFiles) add(id string, h *handle, removals uint64) *handle {
	h.refs = 1
	var idle []*handle
	o.mu.Lock()
	if have := o.m[id]; have != nil {
		have.refs++
		o.mu.Unlock()
		h.f.Close()
		return have
	}
	if o.removals != removals {
		o.mu.Unlock()
		return h // not kept: closed by its reader
	}
	if len(o.m) >= o.max {
		for k, e := range o.m { // map order: a random choice
			if e.refs == 0 {
				delete(o.m, k)
				e.kept = false
				idle = append(idle, e)
				if len(o.m) <= o.max-o.max/8 {
					break
				}
			}
		}
	}
	if len(o.m) < o.max {
		h.kept = true
		o.m[id] = h
	}
	o.mu.Unlock()
	for _, e := range idle {
		e.f.Close()
	}
	return h
}

// release ends one reader of h.
func (o *openFiles) release(h *handle) {
	o.mu.Lock()
	h.refs--
	last := h.refs == 0 && !h.kept
	o.mu.Unlock()
	if last {
		h.f.Close()
	}
}

// drop forgets h, kept under id, whose file was unlinked behind the
// store's back, and ends the caller's reader of it.
func (o *openFiles) drop(id string, h *handle) {
	o.mu.Lock()
	if o.m[id] == h {
		delete(o.m, id)
		h.kept = false
	}
	o.mu.Unlock()
	o.release(h)
}

// forget drops id after Remove unlinked its file; readers still sending
// it finish.
func (o *openFiles) forget(id string) {
	o.mu.Lock()
	o.removals++
	h := o.m[id]
	idle := false
	if h != nil {
		delete(o.m, id)
		h.kept = false
		idle = h.refs == 0
	}
	o.mu.Unlock()
	if idle {
		h.f.Close()
	}
}

// file is an open local object, sharing its handle with the object's
// other readers. It is read at offsets only (ReadAt; the servers send
// OSFile with sendfile at an offset); Close ends this reader.
type file struct {
	h       *handle
	o       *openFiles
	size    int64 // fstat's, at this open
	modTime time.Time
	done    bool
}

func (f *file) Size() int64 { return f.size }

func (f *file) ReadAt(p []byte, off int64) (int, error) { return f.h.f.ReadAt(p, off) }

// OSFile implements shoal.FileObject: md in `shoal all` sends it with
// sendfile as this server does.
func (f *file) OSFile() (*os.File, int64) { return f.h.f, 0 }

func (f *file) ModTime() time.Time { return f.modTime }

// Close implements shoal.Object; a second Close does nothing.
func (f *file) Close() error {
	if !f.done {
		f.done = true
		f.o.release(f.h)
	}
	return nil
}
