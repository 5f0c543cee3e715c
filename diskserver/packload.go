package diskserver

// Opening a disk's packs: their index after a clean stop, a scan of
// their record headers after a crash.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// openPacks opens dir/packs and indexes its records; nil (every object
// a file) where packs are not supported.
func openPacks(dir string) (*packSet, error) {
	if !packsSupported {
		return nil, nil
	}
	ps := &packSet{dir: filepath.Join(dir, packsDir), index: map[string]*packed{}}
	ps.filledCond = sync.NewCond(&ps.mu)
	var err error
	if ps.writable, err = probePunch(ps.dir); err != nil {
		return nil, err
	}
	ps.zeroFill = ps.writable && fillHelps(ps.dir)
	if err := ps.loadUnsettled(); err != nil {
		return nil, err
	}
	idx, useIdx, err := ps.takeIndex()
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(ps.dir)
	if err != nil {
		return nil, err
	}
	var last *pack
	for _, e := range entries {
		seq, err := strconv.ParseUint(e.Name(), 16, 64)
		if err != nil || len(e.Name()) != 16 {
			continue
		}
		p, err := ps.load(filepath.Join(ps.dir, e.Name()), seq, &idx, useIdx)
		if err != nil {
			return nil, err
		}
		ps.nextSeq = max(ps.nextSeq, seq+1)
		if p != nil {
			last = p // ReadDir sorts by name: the newest
			ps.all = append(ps.all, p)
		}
	}
	if last != nil && last.end < packRoll {
		ps.cur = last
	}
	if !ps.writable && ps.nextSeq == 0 {
		return nil, nil // no packs, and none to be made here
	}
	return ps, nil
}

// probePunch makes dir and says whether its filesystem punches holes.
func probePunch(dir string) (bool, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false, err
	}
	f, err := os.CreateTemp(dir, "probe-")
	if err != nil {
		return false, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if _, err := f.WriteAt(make([]byte, 2*packAlign), 0); err != nil {
		return false, err
	}
	return punchHole(f, 0, packAlign) == nil, nil
}

// load opens one pack and indexes its records. A pack with no valid
// header and no room for a record (a crash while it was being made) is
// removed; nil then.
func (ps *packSet) load(path string, seq uint64, idx *packIndex, useIdx bool) (*pack, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	hdr := make([]byte, packHdrSize)
	_, rerr := f.ReadAt(hdr, 0)
	nonce, ok := parsePackHeader(hdr)
	if rerr != nil || !ok {
		f.Close()
		if fi.Size() <= packAlign {
			return nil, os.Remove(path)
		}
		return nil, fmt.Errorf("pack %s: bad header", path)
	}
	p := &pack{seq: seq, f: f, nonce: nonce}
	p.durable = &groupSync{do: func() error { return fdatasync(f) }}
	if useIdx && ps.fromIndex(p, fi.Size(), idx) {
		return p, nil
	}
	ps.scanned++
	if err := ps.scan(p, fi.Size()); err != nil {
		f.Close()
		return nil, fmt.Errorf("pack %s: %w", path, err)
	}
	return p, nil
}

// fromIndex indexes p's records from idx, if idx has p as it is now
// (same size, same nonce).
func (ps *packSet) fromIndex(p *pack, size int64, idx *packIndex) bool {
	end := (size + packAlign - 1) / packAlign * packAlign
	n := -1
	for i, ip := range idx.packs {
		if ip.seq == p.seq && ip.size == end && ip.nonce == p.nonce {
			n = i
		}
	}
	if n < 0 {
		return false
	}
	for _, r := range idx.recordsOf(n) {
		if ps.index[r.id] == nil {
			ps.index[r.id] = &packed{p: p, off: r.off, size: r.size, mtimeNs: r.mtimeNs, state: r.state}
		}
	}
	p.end = end
	return true
}

// scan indexes p's records (size bytes of them). What is not a record
// header where one could start is skipped a block at a time: holes (whole
// records removed), or what a crash left of records never acknowledged.
// Records whose removal was durable but not yet punched are punched now.
func (ps *packSet) scan(p *pack, size int64) error {
	buf := make([]byte, recHeaderSize)
	off := int64(packAlign)
	tail := off // the end of the last record found
	for off < size {
		next, err := seekData(p.f, off)
		if errors.Is(err, errNoMoreData) {
			break
		}
		if err != nil {
			return err
		}
		if off = next / packAlign * packAlign; off >= size {
			break
		}
		n, err := p.f.ReadAt(buf, off)
		if err != nil && err != io.EOF {
			return err
		}
		h, ok := parseRecordHeader(buf[:n], p.nonce)
		if !ok {
			off += packAlign
			continue
		}
		if off+recHeaderSize+h.size > size {
			// Its bytes never all reached the disk, so its create never
			// returned: nothing can be beyond it.
			punchHole(p.f, off, size-off)
			break
		}
		switch {
		case h.state == recRemoved:
			punchHole(p.f, off, recordLen(h.size))
		case h.state == recStaged && !ps.bytesMatch(p, off, h):
			// Made durable after its catalog commit (CreateStagedDeferred)
			// and the crash came first: never acknowledged, and the
			// entry that names it is settled by md (shoal.DeferredStager).
			punchHole(p.f, off, recordLen(h.size))
		case ps.index[h.id] == nil:
			ps.index[h.id] = &packed{p: p, off: off, size: h.size, mtimeNs: h.mtimeNs, state: h.state}
		}
		off += recordLen(h.size)
		tail = off
	}
	if tail < size {
		// Zeros filled ahead of the records, or what a crash left of
		// records never acknowledged (packfill.go): their blocks back.
		punchHole(p.f, tail, size-tail)
	}
	p.end = (size + packAlign - 1) / packAlign * packAlign
	return nil
}

// bytesMatch reports whether a staged record's bytes are those its
// header's check names. Only staged records are read: a published one was
// durable before it was published.
func (ps *packSet) bytesMatch(p *pack, off int64, h recordHeader) bool {
	data := make([]byte, h.size)
	if _, err := p.f.ReadAt(data, off+recHeaderSize); err != nil {
		return false
	}
	return h.bytesMatch(data)
}
