package diskserver

import (
	"cmp"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"shoal"
)

// A clean stop writes the packs' index, packs/index, so that the next
// start reads one file instead of one header per object from every pack
// (on a board's SD card, a random read each). The index holds, for each
// pack, its sequence number, size and nonce, and for each record its
// pack, offset, size, time, state and id; a CRC32C closes it. The next
// start uses it only if no crash came since (no packs/unsettled), only
// for the packs whose size and nonce it matches (any other is scanned),
// and removes it before the store changes anything, so it never outlives
// the state it describes.

const (
	indexName  = "index"
	indexMagic = "shoalix1"
)

// indexedPack is one pack as the index saw it.
type indexedPack struct {
	seq   uint64
	size  int64
	nonce [nonceSize]byte
}

// indexedRecord is one record as the index saw it; pack is an index
// into packIndex.packs.
type indexedRecord struct {
	pack    int
	id      string
	off     int64
	size    int64
	mtimeNs int64
	state   byte
}

type packIndex struct {
	packs   []indexedPack
	records []indexedRecord
	byPack  [][]indexedRecord // records by pack, made by recordsOf
}

// recordsOf is the records of packs[n], in index order. The records are
// grouped once (a stable sort by pack, in place: no copy of them), so
// that loading every pack reads each record once, not once a pack.
func (x *packIndex) recordsOf(n int) []indexedRecord {
	if x.byPack == nil {
		slices.SortStableFunc(x.records, func(a, b indexedRecord) int { return cmp.Compare(a.pack, b.pack) })
		x.byPack = make([][]indexedRecord, len(x.packs))
		for i := 0; i < len(x.records); {
			j := i + 1
			for j < len(x.records) && x.records[j].pack == x.records[i].pack {
				j++
			}
			x.byPack[x.records[i].pack] = x.records[i:j:j]
			i = j
		}
	}
	return x.byPack[n]
}

// encodePackIndex is the index's bytes.
func encodePackIndex(x packIndex) []byte {
	b := make([]byte, 0, 16+len(x.packs)*32+len(x.records)*40)
	b = append(b, indexMagic...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(x.packs)))
	for _, p := range x.packs {
		b = binary.LittleEndian.AppendUint64(b, p.seq)
		b = binary.LittleEndian.AppendUint64(b, uint64(p.size))
		b = append(b, p.nonce[:]...)
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(len(x.records)))
	for _, r := range x.records {
		b = binary.LittleEndian.AppendUint32(b, uint32(r.pack))
		b = binary.LittleEndian.AppendUint64(b, uint64(r.off))
		b = binary.LittleEndian.AppendUint64(b, uint64(r.size))
		b = binary.LittleEndian.AppendUint64(b, uint64(r.mtimeNs))
		b = append(b, r.state, byte(len(r.id)))
		b = append(b, r.id...)
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// parsePackIndex reads an index; ok is false for anything that is not one
// whole, as encodePackIndex writes it, with every field in range.
func parsePackIndex(b []byte) (x packIndex, ok bool) {
	if len(b) < len(indexMagic)+4+8+4 || string(b[:len(indexMagic)]) != indexMagic {
		return x, false
	}
	body := b[:len(b)-4]
	if binary.LittleEndian.Uint32(b[len(body):]) != crc32.Checksum(body, castagnoli) {
		return x, false
	}
	r := body[len(indexMagic):]
	n := int(binary.LittleEndian.Uint32(r))
	r = r[4:]
	if n > len(r)/32 {
		return x, false
	}
	x.packs = make([]indexedPack, n)
	for i := range x.packs {
		p := &x.packs[i]
		p.seq = binary.LittleEndian.Uint64(r)
		p.size = int64(binary.LittleEndian.Uint64(r[8:]))
		copy(p.nonce[:], r[16:32])
		if p.size < 0 {
			return packIndex{}, false
		}
		r = r[32:]
	}
	if len(r) < 8 {
		return packIndex{}, false
	}
	m := binary.LittleEndian.Uint64(r)
	r = r[8:]
	if m > uint64(len(r)/30) {
		return packIndex{}, false
	}
	x.records = make([]indexedRecord, 0, m)
	for range m {
		if len(r) < 30 {
			return packIndex{}, false
		}
		rec := indexedRecord{pack: int(binary.LittleEndian.Uint32(r)),
			off:     int64(binary.LittleEndian.Uint64(r[4:])),
			size:    int64(binary.LittleEndian.Uint64(r[12:])),
			mtimeNs: int64(binary.LittleEndian.Uint64(r[20:])),
			state:   r[28]}
		idLen := int(r[29])
		r = r[30:]
		if idLen > len(r) {
			return packIndex{}, false
		}
		rec.id = string(r[:idLen])
		r = r[idLen:]
		if rec.pack >= n || rec.off < packAlign || rec.size < 0 || rec.size > maxPackedSize ||
			rec.off > x.packs[rec.pack].size-recHeaderSize-rec.size ||
			(rec.state != recStaged && rec.state != recPublished) || !shoal.ValidObjectID(rec.id) {
			return packIndex{}, false
		}
		x.records = append(x.records, rec)
	}
	return x, len(r) == 0
}

// writeIndex writes ps's index durably (a temp file, then its name);
// called once no record can be written or changed any more.
func (ps *packSet) writeIndex() error {
	var x packIndex
	ps.mu.Lock()
	packNo := map[*pack]int{}
	for _, p := range ps.all {
		packNo[p] = len(x.packs)
		x.packs = append(x.packs, indexedPack{seq: p.seq, size: p.end, nonce: p.nonce})
	}
	for id, e := range ps.index { // removed objects are no longer in it
		x.records = append(x.records, indexedRecord{pack: packNo[e.p], id: id, off: e.off, size: e.size, mtimeNs: e.mtimeNs, state: e.state})
	}
	ps.mu.Unlock()
	path := filepath.Join(ps.dir, indexName)
	if err := writeSynced(path+".tmp", encodePackIndex(x), os.O_TRUNC); err != nil {
		return err
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		return err
	}
	return syncDir(ps.dir)
}

// takeIndex reads the index a clean stop left, and removes it, durably,
// whatever it holds; ok is false if there is none to use.
func (ps *packSet) takeIndex() (x packIndex, ok bool, err error) {
	path := filepath.Join(ps.dir, indexName)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return x, false, nil
	}
	if err != nil {
		return x, false, err
	}
	if err := os.Remove(path); err != nil {
		return x, false, err
	}
	if err := syncDir(ps.dir); err != nil {
		return x, false, err
	}
	x, ok = parsePackIndex(b)
	return x, ok && ps.unsettled.since.IsZero(), nil
}
