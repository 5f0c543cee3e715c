package diskserver

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// Small staged objects (up to Store.packMax bytes: what md in `shoal all`
// writes into its own data server) go into pack files, packs/<seq>, one
// record each (packrecord.go): a create is one pwrite into a file that
// exists and a share of one fdatasync of it with every create running at
// the same time (groupSync), where a file of its own costs an inode, a
// name in staged/, a name in objects/ and fsyncs of both. Its state byte
// says staged, published or removed: Publish rewrites it in place (not
// synced: a crash that loses it leaves the object staged, and md
// publishes it again, as with a lost link), Remove durably (the record
// header then says removed) and then punches the record's blocks out of
// the file, which gives their space back, once nobody reads them. The
// index (id → record) is in memory, rebuilt at start by a scan of the
// packs' record headers that skips holes (SEEK_DATA).
//
// Packs are never rewritten or compacted: holes give the space of removed
// records back, so a pack whose records are all removed takes no blocks.

// packRoll is the size past which a disk starts a new pack.
var packRoll int64 = 1 << 30

const packsDir = "packs"

// packSet is one disk's packs and the objects in them.
type packSet struct {
	dir string
	// writable: its filesystem punches holes. Packs found on one that
	// does not (a data directory copied elsewhere) are read and removed
	// from, but their space is not given back, and new objects are files.
	writable bool
	zeroFill bool // zero-fill packs ahead of their records (packfill.go)

	mu      sync.Mutex
	index   map[string]*packed
	cur     *pack // the pack new records go into; nil until the first
	nextSeq uint64
	all     []*pack // every pack, for the index a clean stop writes
	scanned int     // packs scanned at open (not read from the index)

	unsettled  unsettledMark
	stopping   bool           // under mu: a clean stop has begun, no new records
	inflight   sync.WaitGroup // records whose durability nobody has waited for yet, and fills
	filledCond *sync.Cond     // on mu: a fill ended (packfill.go)
}

// errStopping refuses a create once the store's clean stop has begun.
var errStopping = errors.New("the data server is stopping")

// pack is one pack file, open for the life of the store.
type pack struct {
	seq     uint64
	f       *os.File
	nonce   [nonceSize]byte
	end     int64      // where its next record goes; under packSet.mu
	durable *groupSync // fdatasync of f, shared by concurrent writers

	// Zero-filled room past end (packfill.go); under packSet.mu.
	filled  int64 // [end, filled) is zeros, durably
	filling bool  // [filled, filled+packFillAhead) is being filled
	noFill  bool  // a fill failed: appended to from then on
}

// packed is one object in a pack.
type packed struct {
	p       *pack
	off     int64 // its record's
	size    int64
	mtimeNs int64
	state   byte
	readers int  // open objects; under packSet.mu
	removed bool // punch it when its last reader closes
}

// newPack makes the next pack durably: its header, its name; under mu.
func (ps *packSet) newPack() (*pack, error) {
	path := filepath.Join(ps.dir, fmt.Sprintf("%016x", ps.nextSeq))
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	p := &pack{seq: ps.nextSeq, f: f, end: packAlign}
	ps.nextSeq++
	p.durable = &groupSync{do: func() error { return fdatasync(f) }}
	hdr := make([]byte, packHdrSize)
	if _, err = rand.Read(p.nonce[:]); err == nil {
		encodePackHeader(hdr, p.nonce)
		if _, err = f.WriteAt(hdr, 0); err == nil {
			if err = f.Sync(); err == nil {
				err = syncDir(ps.dir)
			}
		}
	}
	if err != nil {
		f.Close()
		os.Remove(path)
		return nil, err
	}
	ps.all = append(ps.all, p)
	return p, nil
}

// put writes a record, rec (its header, then its bytes), of object id
// into the current pack, as staged; durable returns once it is durable.
// A record that never becomes durable is one whose create nobody
// acknowledged: drop removes it (or, after a crash, the scan finds it
// torn or with bytes that do not match its checksum).
func (ps *packSet) put(id string, rec []byte, h recordHeader) (durable func() error, err error) {
	n := recordLen(h.size)
	ps.mu.Lock()
	if ps.stopping {
		ps.mu.Unlock()
		return nil, errStopping
	}
	ps.inflight.Add(1)
	ps.mu.Unlock()
	if err := ps.markUnsettled(); err != nil {
		ps.inflight.Done()
		return nil, err
	}
	ps.mu.Lock()
	var p *pack
	for p == nil || p.reachesFill(n) {
		if p != nil {
			ps.filledCond.Wait() // then the current pack may have rolled
		}
		if ps.cur == nil || ps.cur.end >= packRoll {
			np, err := ps.newPack()
			if err != nil {
				ps.mu.Unlock()
				ps.inflight.Done()
				return nil, err
			}
			ps.cur = np
		}
		p = ps.cur
	}
	off := p.end
	p.end += n
	from, to, fill := ps.fillFrom(p)
	ps.mu.Unlock()
	if fill {
		go ps.fill(p, from, to)
	}

	encodeRecordHeader(rec, p.nonce, h)
	if _, err := p.f.WriteAt(rec, off); err != nil {
		punchHole(p.f, off, n)
		ps.unsync(p)
		ps.inflight.Done()
		return nil, err
	}
	ps.mu.Lock()
	ps.index[id] = &packed{p: p, off: off, size: h.size, mtimeNs: h.mtimeNs, state: recStaged}
	ps.mu.Unlock()
	var once sync.Once
	ticket := p.durable.take() // now, after the write: see take
	return func() error {
		err := p.durable.syncTicket(ticket)
		if err != nil {
			ps.unsync(p)
			ps.failedSync()
		}
		once.Do(ps.inflight.Done)
		return err
	}, nil
}

// stop refuses new records, publishes and removals, and waits for the
// records written to be made durable (or to fail to), so that a clean
// stop's index and marker removal (clearUnsettled) cover them.
func (ps *packSet) stop() {
	ps.mu.Lock()
	ps.stopping = true
	ps.mu.Unlock()
	ps.inflight.Wait()
}

// unsync stops p taking records: its syncs fail from now on (groupSync),
// so the next create starts a new pack.
func (ps *packSet) unsync(p *pack) {
	ps.mu.Lock()
	if ps.cur == p {
		ps.cur = nil
	}
	ps.mu.Unlock()
}

// drop forgets staged id and punches its record: it may be on disk, but
// nobody was told.
func (ps *packSet) drop(id string) {
	ps.mu.Lock()
	e := ps.index[id]
	delete(ps.index, id)
	ps.mu.Unlock()
	if e != nil {
		punchHole(e.p.f, e.off, recordLen(e.size))
	}
}

// has reports whether id is in a pack, staged or not.
func (ps *packSet) has(id string) bool {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.index[id] != nil
}

// open returns published object id; nil if it is not in a pack.
func (ps *packSet) open(id string) *packObject {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	e := ps.index[id]
	if e == nil || e.state != recPublished {
		return nil
	}
	e.readers++
	return &packObject{ps: ps, e: e}
}

// release ends one reader of e; the last one of a removed object punches it.
func (ps *packSet) release(e *packed) {
	ps.mu.Lock()
	e.readers--
	punch := e.removed && e.readers == 0
	ps.mu.Unlock()
	if punch {
		punchHole(e.p.f, e.off, recordLen(e.size))
	}
}

// publish rewrites id's state byte to published; found is false if id is not in a
// pack. Publishing a published object does nothing.
func (ps *packSet) publish(id string) (found bool, err error) {
	ps.mu.Lock()
	e := ps.index[id]
	if e == nil || e.state == recPublished || ps.stopping {
		ps.mu.Unlock()
		if e != nil && e.state != recPublished {
			return true, errStopping // staged still: the next start publishes it
		}
		return e != nil, nil
	}
	e.state = recPublished
	ps.mu.Unlock()
	if _, err := e.p.f.WriteAt([]byte{recPublished}, e.off+recStateOff); err != nil {
		ps.mu.Lock()
		e.state = recStaged
		ps.mu.Unlock()
		return true, err
	}
	return true, nil
}

// remove removes id durably, and punches its record once nobody reads
// it; found is false if id is not in a pack.
func (ps *packSet) remove(id string) (found bool, err error) {
	ps.mu.Lock()
	e := ps.index[id]
	if e == nil || ps.stopping {
		ps.mu.Unlock()
		if e != nil {
			return true, errStopping // the index a clean stop wrote has it
		}
		return false, nil
	}
	delete(ps.index, id)
	ps.mu.Unlock()
	_, err = e.p.f.WriteAt([]byte{recRemoved}, e.off+recStateOff)
	if err == nil {
		err = e.p.durable.sync()
	}
	ps.mu.Lock()
	if err != nil {
		if ps.index[id] == nil {
			ps.index[id] = e // still there, as far as anyone can tell
		}
		ps.mu.Unlock()
		return true, err
	}
	e.removed = true
	punch := e.readers == 0
	ps.mu.Unlock()
	if punch {
		punchHole(e.p.f, e.off, recordLen(e.size))
	}
	return true, nil
}

// list calls fn for every object in state (staged or published).
func (ps *packSet) list(state byte, fn func(id string, e packed)) {
	ps.mu.Lock()
	var ids []string
	var es []packed
	for id, e := range ps.index {
		if e.state == state {
			ids, es = append(ids, id), append(es, *e)
		}
	}
	ps.mu.Unlock()
	for i, id := range ids {
		fn(id, es[i])
	}
}
