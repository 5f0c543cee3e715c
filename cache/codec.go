package cache

import (
	"encoding/binary"
	"errors"
	"math"
	"time"

	"shoal"
)

// The L2 value of one path: what Stat answered, plus the generations it was
// valid under (see doc.go). The format is compact and versioned:
//
//	byte     codecVersion
//	uvarint  n, then n × 8-byte little-endian generations
//	byte     0 for an entry, else the shoal.Kind of a negative answer
//	entry    (only for 0):
//	  varint ID, varint Parent, string Path, byte flags,
//	  varint Size, time MTime, time CTime, varint Version,
//	  4-byte Adler32, bytes MD5, bytes SHA256,
//	  byte layout kind, uvarint N, uvarint K, uvarint M,
//	  bytes Inline (only if flagInline),
//	  uvarint replicas, each: string Server, string Object, varint Shard,
//	  varint Size, 4-byte Sum
//
// A string or bytes field is a uvarint length and the bytes; a time is a
// varint of Unix seconds and a uvarint of nanoseconds. Integers are little
// endian. A value of another version decodes as an error: a miss.
const codecVersion = 1

const (
	flagDir    = 1 << 0
	flagInline = 1 << 1 // Inline is non-nil (possibly empty: an empty inline file)
)

// Bounds that keep a garbage value from making the decoder allocate much.
const (
	maxGens     = 1 + shoal.MaxPathLen/2
	maxReplicas = 1024
)

var errCorrupt = errors.New("cache: corrupt value")

// cached is a decoded L2 value.
type cached struct {
	gens  []uint64
	entry *shoal.Entry // nil for a negative answer
	kind  shoal.Kind   // the negative answer's kind
}

// appendValue encodes gens and the answer (an entry, or a negative kind).
func appendValue(b []byte, gens []uint64, e *shoal.Entry, negative shoal.Kind) []byte {
	b = append(b, codecVersion)
	b = binary.AppendUvarint(b, uint64(len(gens)))
	for _, g := range gens {
		b = binary.LittleEndian.AppendUint64(b, g)
	}
	if e == nil {
		return append(b, byte(negative))
	}
	b = append(b, 0)
	return appendEntry(b, e)
}

func appendEntry(b []byte, e *shoal.Entry) []byte {
	b = binary.AppendVarint(b, e.ID)
	b = binary.AppendVarint(b, e.Parent)
	b = appendString(b, e.Path)
	var flags byte
	if e.IsDir {
		flags |= flagDir
	}
	if e.Inline != nil {
		flags |= flagInline
	}
	b = append(b, flags)
	b = binary.AppendVarint(b, e.Size)
	b = appendTime(b, e.MTime)
	b = appendTime(b, e.CTime)
	b = binary.AppendVarint(b, e.Version)
	b = binary.LittleEndian.AppendUint32(b, e.Sums.Adler32)
	b = appendString(b, string(e.Sums.MD5))
	b = appendString(b, string(e.Sums.SHA256))
	b = append(b, byte(e.Layout.Kind))
	b = binary.AppendUvarint(b, uint64(e.Layout.N))
	b = binary.AppendUvarint(b, uint64(e.Layout.K))
	b = binary.AppendUvarint(b, uint64(e.Layout.M))
	if e.Inline != nil {
		b = appendString(b, string(e.Inline))
	}
	b = binary.AppendUvarint(b, uint64(len(e.Replicas)))
	for _, r := range e.Replicas {
		b = appendString(b, r.Server)
		b = appendString(b, r.Object)
		b = binary.AppendVarint(b, int64(r.Shard))
		b = binary.AppendVarint(b, r.Size)
		b = binary.LittleEndian.AppendUint32(b, r.Sum)
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendTime(b []byte, t time.Time) []byte {
	b = binary.AppendVarint(b, t.Unix())
	return binary.AppendUvarint(b, uint64(t.Nanosecond()))
}

// decodeValue parses an L2 value. Any malformed input is errCorrupt; it
// never panics (FuzzDecodeValue).
func decodeValue(b []byte) (cached, error) {
	d := decoder{b: b}
	if d.byte() != codecVersion {
		return cached{}, errCorrupt
	}
	n := d.uvarint()
	if n > maxGens || n*8 > uint64(len(d.b)) {
		return cached{}, errCorrupt
	}
	var c cached
	c.gens = make([]uint64, n)
	for i := range c.gens {
		c.gens[i] = d.uint64()
	}
	if k := d.byte(); k != 0 {
		c.kind = shoal.Kind(k)
		if d.err != nil || len(d.b) != 0 {
			return cached{}, errCorrupt
		}
		return c, nil
	}
	e := &shoal.Entry{}
	e.ID = d.varint()
	e.Parent = d.varint()
	e.Path = d.string()
	flags := d.byte()
	e.IsDir = flags&flagDir != 0
	e.Size = d.varint()
	e.MTime = d.time()
	e.CTime = d.time()
	e.Version = d.varint()
	e.Sums.Adler32 = d.uint32()
	e.Sums.MD5 = d.bytes()
	e.Sums.SHA256 = d.bytes()
	e.Layout.Kind = shoal.LayoutKind(d.byte())
	e.Layout.N = d.int()
	e.Layout.K = d.int()
	e.Layout.M = d.int()
	if flags&flagInline != 0 {
		e.Inline = d.bytes()
		if e.Inline == nil {
			e.Inline = []byte{}
		}
	}
	nr := d.uvarint()
	// Each replica takes at least 8 bytes: a bound before allocating.
	if nr > maxReplicas || nr*8 > uint64(len(d.b)) {
		return cached{}, errCorrupt
	}
	if nr > 0 {
		e.Replicas = make([]shoal.Replica, nr)
		for i := range e.Replicas {
			r := &e.Replicas[i]
			r.Server = d.string()
			r.Object = d.string()
			r.Shard = d.smallInt()
			r.Size = d.varint()
			r.Sum = d.uint32()
		}
	}
	if d.err != nil || len(d.b) != 0 || flags&^(flagDir|flagInline) != 0 {
		return cached{}, errCorrupt
	}
	c.entry = e
	return c, nil
}

// decoder reads fields from b; after the first error every read returns
// zero and err stays set.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail() { d.err, d.b = errCorrupt, nil }

func (d *decoder) byte() byte {
	if len(d.b) < 1 {
		d.fail()
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) uint32() uint32 {
	if len(d.b) < 4 {
		d.fail()
		return 0
	}
	v := binary.LittleEndian.Uint32(d.b)
	d.b = d.b[4:]
	return v
}

func (d *decoder) uint64() uint64 {
	if len(d.b) < 8 {
		d.fail()
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

// int reads a uvarint that must fit a non-negative int.
func (d *decoder) int() int {
	v := d.uvarint()
	if v > math.MaxInt32 {
		d.fail()
		return 0
	}
	return int(v)
}

// smallInt reads a varint that must fit an int32 (shard indexes).
func (d *decoder) smallInt() int {
	v := d.varint()
	if v > math.MaxInt32 || v < math.MinInt32 {
		d.fail()
		return 0
	}
	return int(v)
}

func (d *decoder) raw() []byte {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail()
		return nil
	}
	s := d.b[:n:n]
	d.b = d.b[n:]
	return s
}

func (d *decoder) string() string { return string(d.raw()) }

// bytes returns a copy (nil when empty) so the entry does not pin the value.
func (d *decoder) bytes() []byte {
	s := d.raw()
	if len(s) == 0 {
		return nil
	}
	return append([]byte(nil), s...)
}

func (d *decoder) time() time.Time {
	sec := d.varint()
	nsec := d.uvarint()
	if nsec >= 1e9 {
		d.fail()
		return time.Time{}
	}
	return time.Unix(sec, int64(nsec)).UTC()
}
