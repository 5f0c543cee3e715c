package diskserver

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"shoal"
)

// Staged objects (shoal.StagedCreator): md in `shoal all` writes an object
// into staged/<id>, commits the file to the catalog, then publishes it to
// objects/. A crash leaves in staged/ exactly the objects whose fate the
// catalog decides, found without walking objects/.

var _ shoal.StagedCreator = (*Store)(nil)

// CreateStaged implements shoal.StagedCreator.
func (s *Store) CreateStaged(ctx context.Context, id string, r io.Reader, size int64) (shoal.ObjectInfo, shoal.Sums, error) {
	return s.create(ctx, id, r, size, true)
}

func (d *disk) stagedPath(id string) string {
	return filepath.Join(d.dir, stagedDir, id)
}

// stage names the written, synced tmp staged/<id>, durably. Many concurrent
// creates share the fsync of staged/ (groupSync).
func (d *disk) stage(id string, tmp *tempFile, size int64, sums shoal.Sums) (shoal.ObjectInfo, shoal.Sums, error) {
	const op = "diskserver.CreateStaged"
	p := d.stagedPath(id)
	if err := tmp.link(p); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return shoal.ObjectInfo{}, shoal.Sums{}, shoal.E(op, id, shoal.KindExist)
		}
		return shoal.ObjectInfo{}, shoal.Sums{}, shoal.E(op, id, diskErrKind(err), err)
	}
	if err := d.stagedSync.sync(); err != nil {
		os.Remove(p)
		return shoal.ObjectInfo{}, shoal.Sums{}, shoal.E(op, id, diskErrKind(err), err)
	}
	return shoal.ObjectInfo{ID: id, Size: size, ModTime: time.Now()}, sums, nil
}

// Publish implements shoal.StagedCreator: a link into objects/ (which,
// unlike a rename, never replaces an object), not fsync'd: a crash that
// loses it leaves the object staged, and Staged's caller publishes it
// again. The staged name goes once the link is durable (unstage).
func (s *Store) Publish(ctx context.Context, id string) error {
	const op = "diskserver.Publish"
	if !shoal.ValidObjectID(id) {
		return invalidID(op, id)
	}
	for _, d := range s.disks {
		src := d.stagedPath(id)
		if _, err := os.Lstat(src); errors.Is(err, fs.ErrNotExist) {
			continue // staged on another disk
		}
		if err := d.makeObjectDir(id); err != nil {
			return shoal.E(op, id, err)
		}
		// Exists: published before a crash lost the staged name's removal.
		if err := os.Link(src, d.objectPath(id)); err != nil && !errors.Is(err, fs.ErrExist) {
			return shoal.E(op, id, err)
		}
		if err := d.unstage(id); err != nil {
			return shoal.E(op, id, err)
		}
		return nil
	}
	return shoal.E(op, id, shoal.KindNotFound)
}

// Staged implements shoal.StagedCreator.
func (s *Store) Staged(ctx context.Context) ([]string, error) {
	var ids []string
	for _, d := range s.disks {
		entries, err := os.ReadDir(filepath.Join(d.dir, stagedDir))
		if err != nil {
			return nil, shoal.E("diskserver.Staged", d.dir, err)
		}
		d.unstaging.mu.Lock()
		published := make(map[string]bool, len(d.unstaging.ids))
		for _, id := range d.unstaging.ids {
			published[id] = true
		}
		d.unstaging.mu.Unlock()
		for _, e := range entries {
			if shoal.ValidObjectID(e.Name()) && !published[e.Name()] {
				ids = append(ids, e.Name())
			}
		}
	}
	return ids, nil
}

// Published objects keep their staged name until their link into
// objects/ is durable: removing it first could, on a filesystem that
// reorders metadata, leave the object with no name after a crash. The
// names go in batches, after one sync of the filesystem (syncObjects),
// so that a create pays no fsync of its fan-out directory.
const (
	unstageBatch = 256
	unstageEvery = time.Second
)

// unstaging is the published objects of a disk whose staged names remain.
type unstaging struct {
	mu   sync.Mutex
	ids  []string
	last time.Time
}

// unstage queues id's staged name for removal, and removes the queue's
// when it is full or a second old.
func (d *disk) unstage(id string) error {
	u := &d.unstaging
	u.mu.Lock()
	u.ids = append(u.ids, id)
	now := time.Now()
	if len(u.ids) < unstageBatch && now.Sub(u.last) < unstageEvery {
		u.mu.Unlock()
		return nil
	}
	ids := u.ids
	u.ids, u.last = nil, now
	u.mu.Unlock()
	return d.dropStaged(ids)
}

// dropStaged removes the staged names of published objects ids once
// their links are durable.
func (d *disk) dropStaged(ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	dirs := map[string]bool{}
	for _, id := range ids {
		dirs[d.objectDir(id)] = true
	}
	if err := syncObjects(d.dir, dirs); err != nil {
		return err
	}
	for _, id := range ids {
		if err := os.Remove(d.stagedPath(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// FlushStaged removes the staged names of every published object (at a
// clean shutdown: the next start then finds nothing staged).
func (s *Store) FlushStaged() error {
	for _, d := range s.disks {
		d.unstaging.mu.Lock()
		ids := d.unstaging.ids
		d.unstaging.ids = nil
		d.unstaging.mu.Unlock()
		if err := d.dropStaged(ids); err != nil {
			return shoal.E("diskserver.FlushStaged", d.dir, err)
		}
	}
	return nil
}

// groupSync fsyncs one directory for many concurrent callers: a caller
// takes a ticket after making its entry, and any fsync that starts after
// that covers it, so callers that arrive while one runs share the next.
type groupSync struct {
	dir string

	mu     sync.Mutex
	cond   *sync.Cond
	next   uint64 // the next ticket
	synced uint64 // every ticket below it is durable
	busy   bool
}

// sync returns once dir's entries made before the call are durable.
func (g *groupSync) sync() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cond == nil {
		g.cond = sync.NewCond(&g.mu)
	}
	ticket := g.next
	g.next++
	for g.synced <= ticket {
		if g.busy {
			g.cond.Wait()
			continue
		}
		g.busy = true
		upto := g.next
		g.mu.Unlock()
		err := syncDir(g.dir)
		g.mu.Lock()
		g.busy = false
		g.cond.Broadcast()
		if err != nil {
			return err // the waiters try again themselves
		}
		g.synced = max(g.synced, upto)
	}
	return nil
}
