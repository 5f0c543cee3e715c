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

var _ shoal.DeferredStager = (*Store)(nil)

// CreateStaged implements shoal.StagedCreator.
func (s *Store) CreateStaged(ctx context.Context, id string, r io.Reader, size int64) (shoal.ObjectInfo, shoal.Sums, error) {
	info, sums, _, err := s.create(ctx, id, r, size, createStaged)
	return info, sums, err
}

// CreateStagedDeferred implements shoal.DeferredStager: a packed object
// is durable once durable returns nil; an object that is a file of its
// own is durable at once (durable nil).
func (s *Store) CreateStagedDeferred(ctx context.Context, id string, r io.Reader, size int64) (shoal.ObjectInfo, shoal.Sums, func() error, error) {
	return s.create(ctx, id, r, size, createDeferred)
}

func (d *disk) stagedPath(id string) string {
	return filepath.Join(d.dir, stagedDir, id)
}

// stage names the written tmp staged/<id>, durably: its bytes and its
// name. The name comes before the file's fsync, which so also makes the
// file's new link count durable (on a filesystem without a journal, a
// directory's fsync does not write the inode it names). Many concurrent
// creates share the fsync of staged/ (groupSync). A crash before both
// leaves a staged object no commit names, which the next start removes.
func (d *disk) stage(id string, tmp *tempFile, size int64, sums shoal.Sums) (shoal.ObjectInfo, shoal.Sums, error) {
	const op = "diskserver.CreateStaged"
	p := d.stagedPath(id)
	if err := tmp.link(p); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return shoal.ObjectInfo{}, shoal.Sums{}, shoal.E(op, id, shoal.KindExist)
		}
		return shoal.ObjectInfo{}, shoal.Sums{}, shoal.E(op, id, diskErrKind(err), err)
	}
	err := tmp.Sync()
	if err == nil {
		err = d.stagedSync.sync()
	}
	if err != nil {
		os.Remove(p)
		return shoal.ObjectInfo{}, shoal.Sums{}, shoal.E(op, id, diskErrKind(err), err)
	}
	return shoal.ObjectInfo{ID: id, Size: size, ModTime: time.Now()}, sums, nil
}

// Publish implements shoal.StagedCreator: a link into objects/ (which,
// unlike a rename, never replaces an object), not fsync'd: a crash that
// loses it leaves the object staged, and Staged's caller publishes it
// again. The staged name goes later, in the background, once the link is
// durable (unstage).
func (s *Store) Publish(ctx context.Context, id string) error {
	const op = "diskserver.Publish"
	if !shoal.ValidObjectID(id) {
		return invalidID(op, id)
	}
	if found, err := s.inPacks(id, (*packSet).publish); found || err != nil {
		if err != nil {
			return shoal.E(op, id, diskErrKind(err), err)
		}
		return nil
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
		d.unstaging.add(d, id)
		return nil
	}
	return shoal.E(op, id, shoal.KindNotFound)
}

// Staged implements shoal.StagedCreator.
func (s *Store) Staged(ctx context.Context) ([]string, error) {
	var ids []string
	for _, d := range s.disks {
		if d.packs != nil {
			d.packs.list(recStaged, func(id string, _ packed) { ids = append(ids, id) })
		}
		// The published set first: a name read before it could be one a
		// background drop removes, and forgets, in between.
		published := d.unstaging.published()
		entries, err := os.ReadDir(filepath.Join(d.dir, stagedDir))
		if err != nil {
			return nil, shoal.E("diskserver.Staged", d.dir, err)
		}
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
// names go in batches, after one sync of the filesystem (syncObjects), in
// the background: a create pays neither an fsync of its fan-out
// directory nor, every unstageBatch creates, the wait for a syncfs.
const (
	unstageBatch = 256
	unstageEvery = time.Second // the longest a quiet disk keeps a name
)

// unstaging is the published objects of a disk whose staged names remain:
// queued (ids), or being removed by the one drop that may run (dropping).
type unstaging struct {
	mu       sync.Mutex
	ids      []string
	dropping []string
	busy     bool        // a drop runs
	idle     *sync.Cond  // signalled when busy becomes false
	timer    *time.Timer // drops the queue unstageEvery after it began
}

// add queues id's staged name for removal: at once in the background when
// the queue is full, else within unstageEvery.
func (u *unstaging) add(d *disk, id string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.ids = append(u.ids, id)
	u.scheduleLocked(d)
}

// scheduleLocked starts a background drop of a full queue, or arms the
// timer that drops a partial one.
func (u *unstaging) scheduleLocked(d *disk) {
	switch {
	case len(u.ids) >= unstageBatch:
		u.startLocked(d)
	case len(u.ids) > 0 && u.timer == nil:
		u.timer = time.AfterFunc(unstageEvery, func() {
			u.mu.Lock()
			defer u.mu.Unlock()
			u.timer = nil
			u.startLocked(d)
		})
	}
}

// startLocked starts a background drop of the queue unless one runs (it
// schedules the next itself when it ends).
func (u *unstaging) startLocked(d *disk) {
	if u.busy || len(u.ids) == 0 {
		return
	}
	batch := u.takeLocked()
	go func() {
		err := d.dropStaged(batch)
		u.mu.Lock()
		defer u.mu.Unlock()
		u.doneLocked(batch, err)
		if err == nil {
			// Not after a failure: a failing disk is not retried every
			// second forever; the next add, FlushStaged or, after a
			// crash, the next start's reconcile deals with the names.
			u.scheduleLocked(d)
		}
	}()
}

// takeLocked marks a drop of the whole queue as running and returns it.
func (u *unstaging) takeLocked() []string {
	batch := u.ids
	u.busy, u.dropping, u.ids = true, batch, nil
	return batch
}

// doneLocked ends the drop of batch: on failure its names are queued again.
func (u *unstaging) doneLocked(batch []string, err error) {
	if err != nil {
		u.ids = append(batch, u.ids...)
	}
	u.busy, u.dropping = false, nil
	if u.idle != nil {
		u.idle.Broadcast()
	}
}

// published is the set of queued and dropping IDs: published objects.
func (u *unstaging) published() map[string]bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := make(map[string]bool, len(u.ids)+len(u.dropping))
	for _, id := range u.ids {
		out[id] = true
	}
	for _, id := range u.dropping {
		out[id] = true
	}
	return out
}

// flush removes every queued staged name now, once any background drop
// has ended; no background drop starts while it runs.
func (u *unstaging) flush(d *disk) error {
	u.mu.Lock()
	if u.timer != nil {
		u.timer.Stop() // one that fired meanwhile finds flush busy, or nothing queued
		u.timer = nil
	}
	if u.idle == nil {
		u.idle = sync.NewCond(&u.mu)
	}
	for u.busy {
		u.idle.Wait()
	}
	batch := u.takeLocked()
	u.mu.Unlock()
	err := d.dropStaged(batch)
	u.mu.Lock()
	defer u.mu.Unlock()
	u.doneLocked(batch, err)
	return err
}

// dropStaged removes the staged names of published objects ids once
// their links are durable.
func (d *disk) dropStaged(ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	if err := syncObjects(d, ids); err != nil {
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
// clean shutdown: the next start then finds nothing staged), writes the
// packs' index and removes their unsettled marker.
func (s *Store) FlushStaged() error {
	for _, d := range s.disks {
		if err := d.unstaging.flush(d); err != nil {
			return shoal.E("diskserver.FlushStaged", d.dir, err)
		}
	}
	for _, d := range s.disks {
		if d.packs == nil {
			continue
		}
		d.packs.stop()
		if err := d.packs.cutFilled(); err != nil {
			return shoal.E("diskserver.FlushStaged", d.dir, err)
		}
		if err := d.packs.writeIndex(); err != nil {
			return shoal.E("diskserver.FlushStaged", d.dir, err)
		}
		if err := d.packs.clearUnsettled(false); err != nil {
			return shoal.E("diskserver.FlushStaged", d.dir, err)
		}
	}
	return nil
}

// groupSync runs one sync (an fsync of a directory, an fdatasync of a
// pack) for many concurrent callers: a caller takes a ticket after its
// write, and any sync that starts after that covers it, so callers that
// arrive while one runs share the next.
type groupSync struct {
	do func() error

	mu     sync.Mutex
	cond   *sync.Cond
	next   uint64 // the next ticket
	synced uint64 // every ticket below it is durable
	busy   bool
	failed error // the first sync's failure: nothing since is known durable
}

// sync returns once the writes made before the call are durable.
func (g *groupSync) sync() error { return g.syncTicket(g.take()) }

// take is a ticket for the writes made so far: syncTicket(ticket)
// returns once a sync begun after take returned is done, which a later
// caller may have run already (then at once). So writes whose tickets
// were taken as they were made share the first sync begun after all of
// them, however late their callers ask.
func (g *groupSync) take() uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	t := g.next
	g.next++
	return t
}

func (g *groupSync) syncTicket(ticket uint64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cond == nil {
		g.cond = sync.NewCond(&g.mu)
	}
	for g.synced <= ticket {
		if g.failed != nil {
			return g.failed
		}
		if g.busy {
			g.cond.Wait()
			continue
		}
		g.busy = true
		upto := g.next
		g.mu.Unlock()
		err := g.do()
		g.mu.Lock()
		g.busy = false
		g.cond.Broadcast()
		if err != nil {
			// Sticky: after a failed fsync the kernel may have dropped the
			// dirty pages it could not write and marked them clean, so a
			// later fsync that succeeds proves nothing about the writes
			// made before; every caller from now on gets the error.
			g.failed = err
			return err
		}
		g.synced = max(g.synced, upto)
	}
	return nil
}
