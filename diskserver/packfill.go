package diskserver

// A pack is zero-filled ahead of its records, packFillAhead bytes at a
// time, in the background: a record written there goes into blocks the
// file already has, below its durable size, so its fdatasync writes the
// bytes and flushes the disk's cache, and commits nothing to the
// filesystem's journal. A record appended past the end of the file
// changes its size, and ext4 then commits its journal for every such
// fdatasync: 245 µs a 16 KiB record on this VM, against 123 µs into
// filled blocks (a Go loop of 3,000 of each), and with the catalog's own
// commit beside it a create at one connection spent a journal commit on
// each. Nothing depends on the zeros for correctness: a record that
// finds no filled room is appended and synced as before.
//
// A create never writes where zeros are being written: one whose record
// would reach into the range being filled waits for the fill (the next
// fill starts when half of the room is left, so this is rare). A clean
// stop cuts the unused zeros off (so the index a clean stop writes still
// matches the file's size); a start after a crash punches them out. Only
// where it helps: see fillHelps.

// packFillAhead is how far a pack is zero-filled past its records; 0: not at all.
var packFillAhead int64 = 8 << 20

// packZeros is what a fill writes, a piece at a time.
var packZeros [256 << 10]byte

// fillFrom decides, under ps.mu and after a record took its room in p,
// whether p needs more filled room: it returns the range to fill (and
// marks p filling), or ok false.
func (ps *packSet) fillFrom(p *pack) (from, to int64, ok bool) {
	if !ps.zeroFill || packFillAhead <= 0 || p.filling || p.noFill || p.filled-p.end >= packFillAhead/2 {
		return 0, 0, false
	}
	from = max(p.filled, p.end)
	to = min(from+packFillAhead, packRoll)
	if to <= from {
		return 0, 0, false
	}
	p.filling = true
	ps.inflight.Add(1) // a clean stop waits for it
	return from, to, true
}

// fill writes zeros over [from, to) of p and makes them durable. Nobody
// writes there meanwhile (put waits), so a failure punches them out again
// and p is appended to from then on.
func (ps *packSet) fill(p *pack, from, to int64) {
	defer ps.inflight.Done()
	var err error
	for off := from; off < to && err == nil; off += int64(len(packZeros)) {
		_, err = p.f.WriteAt(packZeros[:min(int64(len(packZeros)), to-off)], off)
	}
	if err == nil {
		err = fdatasync(p.f)
	}
	if err != nil {
		punchHole(p.f, from, to-from)
	}
	ps.mu.Lock()
	if err == nil {
		p.filled = to
	} else {
		p.noFill = true // a full disk, most likely: no more zeros here
	}
	p.filling = false
	ps.filledCond.Broadcast()
	ps.mu.Unlock()
}

// reachesFill reports, under packSet.mu, whether a record of n bytes at
// p.end would reach into the range being filled: it must wait for
// packSet.filledCond.
func (p *pack) reachesFill(n int64) bool {
	return p.filling && p.end+n > p.filled
}

// cutFilled cuts the zeros past the records of every pack off, once no
// record can be written any more (a clean stop): the file's size is then
// its records' end again, which the index records. A pack whose fill
// failed may hold zeros (or holes) past its records too, and is cut as well.
func (ps *packSet) cutFilled() error {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for _, p := range ps.all {
		if p.filled <= p.end && !p.noFill {
			continue
		}
		if err := p.f.Truncate(p.end); err != nil {
			return err
		}
		if err := fdatasync(p.f); err != nil {
			return err
		}
		p.filled = p.end
	}
	return nil
}
