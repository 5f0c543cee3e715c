package diskserver

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"shoal"
)

// A run that writes packed records leaves packs/unsettled (the time it
// began) until its clean stop (FlushStaged) removes it. Finding it at
// start means the run before crashed, so the catalog can hold entries,
// committed while their records were being made durable
// (CreateStagedDeferred), whose records never were: those entries' files
// were created since that time (shoal.DeferredStager).

const unsettledName = "unsettled"

// unsettledMark is a packSet's marker.
type unsettledMark struct {
	mu    sync.Mutex
	since time.Time // of a crashed run not yet settled; zero if none
	mark  time.Time // what this run wrote in the marker; zero until it does
}

func (ps *packSet) markerPath() string { return filepath.Join(ps.dir, unsettledName) }

// loadUnsettled reads the marker a crashed run left.
func (ps *packSet) loadUnsettled() error {
	b, err := os.ReadFile(ps.markerPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		ns = 0 // unreadable (a torn write): the catalog's whole history is suspect
	}
	ps.unsettled.since = time.Unix(0, ns)
	return nil
}

// markUnsettled writes the marker, durably, before this run's first
// record. A crashed run's unsettled time is kept until Settled.
func (ps *packSet) markUnsettled() error {
	m := &ps.unsettled
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.mark.IsZero() {
		return nil
	}
	// A minute early: the entries are compared by their mtime, which
	// the catalog may keep to the second, and a clock can step back.
	since := time.Now().Add(-time.Minute)
	if !m.since.IsZero() {
		since = m.since
	}
	err := writeSynced(ps.markerPath(), []byte(strconv.FormatInt(since.UnixNano(), 10)+"\n"), os.O_TRUNC)
	if err == nil {
		err = syncDir(ps.dir)
	}
	if err == nil {
		m.mark = since
	}
	return err
}

// failedSync: this run's records may include some whose entries were
// committed but whose bytes were not made durable, so even its clean
// stop leaves the marker for the next start to settle them.
func (ps *packSet) failedSync() {
	m := &ps.unsettled
	m.mu.Lock()
	if m.since.IsZero() {
		m.since = m.mark
	}
	m.mu.Unlock()
}

// clearUnsettled removes the marker durably: at a clean stop (settled
// false: unless a crashed run's entries are still to be settled, by a
// later start), or once they are (settled); this run marks again at its
// next record.
func (ps *packSet) clearUnsettled(settled bool) error {
	m := &ps.unsettled
	m.mu.Lock()
	defer m.mu.Unlock()
	if !settled && !m.since.IsZero() {
		return nil
	}
	m.since, m.mark = time.Time{}, time.Time{}
	if err := os.Remove(ps.markerPath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return syncDir(ps.dir)
}

// Unsettled implements shoal.DeferredStager: the earliest start of a
// crashed run over the store's disks.
func (s *Store) Unsettled() (since time.Time, ok bool) {
	for _, d := range s.disks {
		if d.packs == nil {
			continue
		}
		d.packs.unsettled.mu.Lock()
		t := d.packs.unsettled.since
		d.packs.unsettled.mu.Unlock()
		if !t.IsZero() && (!ok || t.Before(since)) {
			since, ok = t, true
		}
	}
	return since, ok
}

// MaxDeferred implements shoal.DeferredStager: only packed creates are
// deferred, and no run packs more than MaxPackMax bytes, whatever its
// disk.pack_max.
func (s *Store) MaxDeferred() int64 { return MaxPackMax }

// Settled implements shoal.DeferredStager.
func (s *Store) Settled() error {
	for _, d := range s.disks {
		if d.packs == nil {
			continue
		}
		if err := d.packs.clearUnsettled(true); err != nil {
			return shoal.E("diskserver.Settled", d.dir, err)
		}
	}
	return nil
}
