package diskserver

import (
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"hash/adler32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"shoal"
)

// DefaultReserveBytes is the free space each disk keeps: Create refuses a
// disk with less than this left.
const DefaultReserveBytes = 64 << 20

// copyBufSize is the size of the pooled buffers uploads stream through.
const copyBufSize = 256 << 10

var copyBufs = sync.Pool{New: func() any { b := make([]byte, copyBufSize); return &b }}

// Store is a shoal.BlobStore over one or more local directories, one per
// disk. Objects are files named by their id; a new object is written to a
// temp file, fsync'd, then linked into place, so an object is either
// complete or absent.
type Store struct {
	disks   []*disk
	reserve int64
	packMax int64      // the largest staged object kept in a pack; < 0: none
	noMD5   bool       // files get an adler32 only (see SetMD5)
	open    *openFiles // objects' files kept open for readers

	mu       sync.Mutex
	creating map[string]chan struct{} // ids with a Create in flight; closed when it ends
}

var _ shoal.BlobStore = (*Store)(nil)

// NewStore opens (creating if needed) the data directories and removes temp
// files left by a crash. reserve is the free space Create leaves on each
// disk (negative: DefaultReserveBytes; 0: none).
func NewStore(dirs []string, reserve int64) (*Store, error) {
	if len(dirs) == 0 {
		return nil, shoal.Errorf("diskserver.NewStore", shoal.KindInvalid, "no data directory")
	}
	if reserve < 0 {
		reserve = DefaultReserveBytes
	}
	s := &Store{reserve: reserve, packMax: DefaultPackMax, creating: map[string]chan struct{}{}, open: newOpenFiles(maxOpenFiles)}
	claims := map[[2]int32]*atomic.Int64{}
	for _, dir := range dirs {
		d, err := openDisk(dir)
		if err != nil {
			return nil, err
		}
		d.claimed = new(atomic.Int64)
		if _, _, fsid, err := d.statfs(); err == nil && fsid != [2]int32{} {
			if c := claims[fsid]; c != nil {
				d.claimed = c
			}
			claims[fsid] = d.claimed
		}
		s.disks = append(s.disks, d)
	}
	return s, nil
}

func invalidID(op, id string) error {
	return shoal.Errorf(op, shoal.KindInvalid, "bad object id %q", id)
}

// exists reports whether a disk holds id, in a pack (staged or not) or
// as a file.
func (s *Store) exists(id string) bool {
	for _, d := range s.disks {
		if d.packs != nil && d.packs.has(id) {
			return true
		}
		if _, err := os.Stat(d.objectPath(id)); err == nil {
			return true
		}
	}
	return false
}

// room is what d can still take: free bytes beyond the reserve, less
// what the uploads in flight on its filesystem have been promised.
func (s *Store) room(d *disk) (int64, error) {
	avail, _, _, err := d.statfs()
	if err != nil {
		return 0, err
	}
	return avail - s.reserve - d.claimed.Load(), nil
}

// pickDisk returns the disk with the most room, if that room is more than
// need bytes. A disk whose filesystem cannot be read (its directory gone,
// an I/O error) takes no writes; it is "full" only if it is not: when no
// disk could be read, the answer is KindUnavailable with why, and when
// the disks that could be are full, the failing ones are named beside.
func (s *Store) pickDisk(need int64) (*disk, error) {
	const op = "diskserver.Create"
	var best *disk
	var bestRoom int64
	var failed []error
	for _, d := range s.disks {
		room, err := s.room(d)
		if err != nil {
			failed = append(failed, err)
			continue
		}
		if room > need && (best == nil || room > bestRoom) {
			best, bestRoom = d, room
		}
	}
	switch {
	case best != nil:
		return best, nil
	case len(failed) == len(s.disks):
		return nil, shoal.Errorf(op, shoal.KindUnavailable, "no data directory can be read: %w", diskErrors(failed))
	case len(failed) > 0:
		return nil, shoal.Errorf(op, shoal.KindInsufficient, "disk full: no readable disk has %d bytes free beyond its reserve of %d and the uploads in flight; and %w", need+1, s.reserve, diskErrors(failed))
	}
	return nil, shoal.Errorf(op, shoal.KindInsufficient, "disk full: no disk has %d bytes free beyond its reserve of %d and the uploads in flight", need+1, s.reserve)
}

// diskErrors are the errors of several disks on one line (errors.Join's
// newlines would break a log line and an HTTP reason), each still found
// by errors.Is and errors.As.
type diskErrors []error

func (e diskErrors) Error() string {
	msgs := make([]string, len(e))
	for i, err := range e {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "; ")
}

func (e diskErrors) Unwrap() []error { return e }

// Create implements shoal.BlobStore.
func (s *Store) Create(ctx context.Context, id string, r io.Reader) (shoal.ObjectInfo, shoal.Sums, error) {
	return s.CreateSized(ctx, id, r, 0)
}

// CreateSized is Create for a body of known size: it refuses at once
// (KindInsufficient) when no disk has size bytes free beyond its reserve.
func (s *Store) CreateSized(ctx context.Context, id string, r io.Reader, size int64) (shoal.ObjectInfo, shoal.Sums, error) {
	info, sums, _, err := s.create(ctx, id, r, size, createNamed)
	return info, sums, err
}

// createMode is how create makes an object: named at once, staged, or
// staged and made durable by the caller (CreateStagedDeferred).
type createMode int

const (
	createNamed createMode = iota
	createStaged
	createDeferred
)

// create is CreateSized of an object named at once, or staged (see
// staged.go).
func (s *Store) create(ctx context.Context, id string, r io.Reader, size int64, mode createMode) (shoal.ObjectInfo, shoal.Sums, func() error, error) {
	const op = "diskserver.Create"
	if !shoal.ValidObjectID(id) {
		return shoal.ObjectInfo{}, shoal.Sums{}, nil, invalidID(op, id)
	}
	// One Create per id at a time, across disks: a second one waits for the
	// first, then finds its object (KindExist) or, if it failed, takes over.
	for {
		s.mu.Lock()
		busy, ok := s.creating[id]
		if !ok {
			done := make(chan struct{})
			s.creating[id] = done
			s.mu.Unlock()
			defer func() {
				s.mu.Lock()
				delete(s.creating, id)
				s.mu.Unlock()
				close(done)
			}()
			break
		}
		s.mu.Unlock()
		select {
		case <-busy:
		case <-ctx.Done():
			return shoal.ObjectInfo{}, shoal.Sums{}, nil, shoal.E(op, id, shoal.KindTimeout, ctx.Err())
		}
	}
	if s.exists(id) {
		return shoal.ObjectInfo{}, shoal.Sums{}, nil, shoal.E(op, id, shoal.KindExist)
	}
	d, err := s.pickDisk(max(size, 0))
	if err != nil {
		return shoal.ObjectInfo{}, shoal.Sums{}, nil, err
	}
	return d.create(ctx, id, &roomReader{r: r, s: s, d: d, want: size}, mode)
}

// roomReader keeps an upload within its disk's room. A body of known
// length claims it whole at the start (and gives the claim back as it is
// written, or at the end); a body of unknown length (chunked) is checked
// against the room left at every read, so that it never eats into the
// reserve either: past it, KindInsufficient.
type roomReader struct {
	r       io.Reader
	s       *Store
	d       *disk
	want    int64 // declared length; < 0 unknown
	claim   int64 // what is still claimed
	started bool
}

func (rr *roomReader) Read(p []byte) (int, error) {
	if !rr.started {
		rr.started = true
		if rr.want > 0 {
			rr.claim = rr.want
			rr.d.claimed.Add(rr.claim)
		}
	}
	n, err := rr.r.Read(p)
	if n > 0 {
		if rr.want < 0 {
			room, serr := rr.s.room(rr.d)
			if serr == nil && room < int64(n) {
				return 0, shoal.Errorf("diskserver.Create", shoal.KindInsufficient,
					"disk full: %s has no room for more of this upload beyond its reserve of %d bytes", rr.d.dir, rr.s.reserve)
			}
		} else if give := min(int64(n), rr.claim); give > 0 {
			rr.claim -= give
			rr.d.claimed.Add(-give)
		}
	}
	return n, err
}

// release gives back what is still claimed (the upload ended or failed).
func (rr *roomReader) release() {
	if rr.claim > 0 {
		rr.d.claimed.Add(-rr.claim)
		rr.claim = 0
	}
}

// create writes r on d: into a pack if it is a small staged object, else
// into a file of its own.
func (d *disk) create(ctx context.Context, id string, r *roomReader, mode createMode) (shoal.ObjectInfo, shoal.Sums, func() error, error) {
	defer r.release()
	if mode != createNamed && d.packs != nil && d.packs.writable && r.want >= 0 && r.want <= r.s.packMax {
		return d.createPacked(ctx, id, r, mode)
	}
	info, sums, err := d.createFile(ctx, id, r, mode != createNamed, !r.s.noMD5)
	return info, sums, nil, err
}

// SetMD5 says whether an object's create computes its MD5 besides its
// adler32 (the default: on). MD5 costs more CPU than the write itself: 1
// MiB creates at 16 connections were 1.30 times as fast without it. A
// packed record's bytes are checked at start with a CRC32C of their own.
func (s *Store) SetMD5(on bool) { s.noMD5 = !on }

// createFile writes r to a temp file on d, hashing it in the same pass,
// and links it into place once it is durable (its MD5 only when withMD5).
// Any failure removes the temp file.
func (d *disk) createFile(ctx context.Context, id string, r io.Reader, staged, withMD5 bool) (info shoal.ObjectInfo, sums shoal.Sums, err error) {
	const op = "diskserver.Create"
	tmp, err := d.newTemp(id)
	if err != nil {
		return info, sums, shoal.E(op, id, diskErrKind(err), err)
	}
	defer tmp.discard() // after a successful link this drops the temp name only

	ad, md := adler32.New(), md5.New()
	bufp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bufp)
	buf := *bufp
	var size int64
	for {
		if err := ctx.Err(); err != nil {
			return info, sums, shoal.E(op, id, shoal.KindTimeout, err)
		}
		n, rerr := r.Read(buf)
		if n > 0 {
			chunk := buf[:n]
			if _, err := tmp.Write(chunk); err != nil {
				return info, sums, shoal.E(op, id, diskErrKind(err), err)
			}
			ad.Write(chunk)
			if withMD5 {
				md.Write(chunk)
			}
			size += int64(n)
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return info, sums, readErr(op, id, rerr)
		}
	}
	got := shoal.Sums{Adler32: ad.Sum32()}
	if withMD5 {
		got.MD5 = md.Sum(nil)
	}
	if staged {
		return d.stage(id, tmp, size, got)
	}
	if err := tmp.Sync(); err != nil {
		return info, sums, shoal.E(op, id, diskErrKind(err), err)
	}
	dir := d.objectDir(id)
	if err := d.makeObjectDir(id); err != nil {
		return info, sums, shoal.E(op, id, diskErrKind(err), err)
	}
	// Link, unlike rename, fails if the name exists: an object, once
	// created, never changes.
	if err := tmp.link(filepath.Join(dir, id)); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return info, sums, shoal.E(op, id, shoal.KindExist)
		}
		return info, sums, shoal.E(op, id, diskErrKind(err), err)
	}
	if err := syncDir(dir); err != nil {
		os.Remove(filepath.Join(dir, id))
		return info, sums, shoal.E(op, id, diskErrKind(err), err)
	}
	return shoal.ObjectInfo{ID: id, Size: size, ModTime: time.Now()}, got, nil
}

// readErr classifies a failure of the upload's reader: a *shoal.Error keeps
// its kind; anything else (the client went away, a short body) is the
// client's fault.
func readErr(op, id string, err error) error {
	var se *shoal.Error
	if errors.As(err, &se) {
		return shoal.E(op, id, err)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return shoal.E(op, id, shoal.KindTimeout, err)
	}
	return shoal.E(op, id, shoal.KindInvalid, err)
}

// diskErrKind is KindInsufficient for a full disk or quota, else KindOther.
func diskErrKind(err error) shoal.Kind {
	switch {
	case errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT):
		return shoal.KindInsufficient
	case errors.Is(err, errStopping):
		return shoal.KindUnavailable
	}
	return shoal.KindOther
}

// Open implements shoal.BlobStore.
func (s *Store) Open(ctx context.Context, id string) (shoal.Object, error) {
	f, err := s.openFile(id)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// localObject is an object of this store: a file of its own, or a
// record in a pack.
type localObject interface {
	shoal.Object
	shoal.FileObject
	ModTime() time.Time
}

// openFile opens id from a pack, from the kept open files, or from its
// disk.
func (s *Store) openFile(id string) (localObject, error) {
	const op = "diskserver.Open"
	if !shoal.ValidObjectID(id) {
		return nil, invalidID(op, id)
	}
	for _, d := range s.disks {
		if d.packs != nil {
			if o := d.packs.open(id); o != nil {
				return o, nil
			}
		}
	}
	h, removals := s.open.get(id)
	if h != nil {
		// The name still leads to the kept file? Else it was deleted or
		// replaced behind the store's back: open it by name, as if never
		// kept.
		key, size, mtime, err := h.d.statName(id)
		if err == nil && key == h.key {
			return &file{h: h, o: s.open, size: size, modTime: mtime}, nil
		}
		s.open.drop(id, h)
		_, removals = s.open.get(id)
	}
	for _, d := range s.disks {
		f, err := d.openObject(id)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, shoal.E(op, id, err)
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, shoal.E(op, id, err)
		}
		h := &handle{f: f, d: d}
		if key, ok := keyOf(fi); ok {
			h.key = key
			h = s.open.add(id, h, removals)
		} else {
			h.refs = 1 // not kept: this platform cannot check a kept file's name
		}
		return &file{h: h, o: s.open, size: fi.Size(), modTime: fi.ModTime()}, nil
	}
	return nil, shoal.E(op, id, shoal.KindNotFound)
}

// Remove implements shoal.BlobStore.
func (s *Store) Remove(ctx context.Context, id string) error {
	const op = "diskserver.Remove"
	if !shoal.ValidObjectID(id) {
		return invalidID(op, id)
	}
	if found, err := s.inPacks(id, (*packSet).remove); found || err != nil {
		if err != nil {
			return shoal.E(op, id, diskErrKind(err), err)
		}
		return nil
	}
	// Unlinked first, then forgotten: an open that read the file before
	// the unlink is not kept (openFiles.add).
	defer s.open.forget(id)
	for _, d := range s.disks {
		for _, p := range []string{d.objectPath(id), d.stagedPath(id)} {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return shoal.E(op, id, err)
			}
		}
	}
	return nil
}

// Walk implements shoal.BlobStore. Files whose names are not object ids
// (none should exist) are skipped.
func (s *Store) Walk(ctx context.Context, fn func(shoal.ObjectInfo) error) error {
	const op = "diskserver.Walk"
	for _, d := range s.disks {
		if d.packs != nil {
			var err error
			d.packs.list(recPublished, func(id string, e packed) {
				if err == nil {
					err = fn(shoal.ObjectInfo{ID: id, Size: e.size, ModTime: time.Unix(0, e.mtimeNs)})
				}
			})
			if err != nil {
				return shoal.E(op, d.dir, err)
			}
		}
		root := filepath.Join(d.dir, objectsDir)
		err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil // removed while walking
				}
				return err
			}
			if e.IsDir() {
				return ctx.Err()
			}
			if !shoal.ValidObjectID(e.Name()) {
				return nil
			}
			fi, err := e.Info()
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if err != nil {
				return err
			}
			return fn(shoal.ObjectInfo{ID: e.Name(), Size: fi.Size(), ModTime: fi.ModTime()})
		})
		if err != nil {
			return shoal.E(op, d.dir, err)
		}
	}
	return nil
}

// Space implements shoal.BlobStore: bytes free beyond the reserve, and the
// size of every distinct filesystem holding a data directory.
func (s *Store) Space(ctx context.Context) (shoal.Space, error) {
	var sp shoal.Space
	seen := map[[2]int32]bool{}
	for _, d := range s.disks {
		avail, total, fsid, err := d.statfs()
		if err != nil {
			return shoal.Space{}, err
		}
		if fsid != [2]int32{} && seen[fsid] {
			continue
		}
		seen[fsid] = true
		sp.Total += total
		if free := avail - s.reserve - d.claimed.Load(); free > 0 {
			sp.Free += free
		}
	}
	return sp, nil
}

// FullBelow is the room beyond its reserve under which a disk counts as
// full: it could take no file worth placing there.
const FullBelow = 1 << 20

// Full says why the store can take no more writes: every disk has less
// than FullBelow free beyond its reserve (what shoal disk keeps so that
// the filesystem never runs out). nil while a disk has room. The data
// server's health check and metrics report it.
func (s *Store) Full() error {
	var why []string
	for _, d := range s.disks {
		avail, total, _, err := d.statfs()
		if err != nil {
			return err
		}
		if avail-s.reserve >= FullBelow {
			return nil
		}
		why = append(why, fmt.Sprintf("%s has %d bytes free of %d, the reserve is %d", d.dir, avail, total, s.reserve))
	}
	return shoal.Errorf("diskserver", shoal.KindInsufficient, "disk full: %s", strings.Join(why, "; "))
}

// Dirs returns the data directories, in the order given.
func (s *Store) Dirs() []string {
	out := make([]string, len(s.disks))
	for i, d := range s.disks {
		out[i] = d.dir
	}
	return out
}
