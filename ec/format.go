package ec

import (
	"encoding/binary"
	"hash/crc32"
	"time"

	"shoal"
)

// A shard object is self-describing, so that a shard found on a disk can be
// checked and placed without the catalog:
//
//	header (32 bytes) | chunk 0 | crc 0 | chunk 1 | crc 1 | … | footer (48 bytes)
//
// Chunk s is shard i's part of stripe s: chunkSize bytes for every stripe
// but the last, which holds ceil(rest/K) bytes (zero-padded data), so a
// small file costs little more than its size. Each chunk is followed by its
// crc32c (little endian), so corruption is found per stripe at read time.
// The footer carries the file size and the user file's sums; it is written
// last, so a shard whose footer checks out was written to the end.
const (
	HeaderSize = 32
	FooterSize = 48
	CRCSize    = 4

	formatVersion = 1
)

var (
	headerMagic = [8]byte{'S', 'H', 'O', 'A', 'L', 'E', 'C', '1'}
	footerMagic = [8]byte{'S', 'H', 'O', 'A', 'L', 'E', 'N', 'D'}
	castagnoli  = crc32.MakeTable(crc32.Castagnoli)
)

func crc32c(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// header is the fixed part of a shard: the code and where this shard sits.
type header struct {
	K, M      int
	Index     int   // shard index, 0 … K+M-1; data shards first
	ChunkSize int64 // bytes per shard per full stripe
}

func (h header) marshal() []byte {
	b := make([]byte, HeaderSize)
	copy(b, headerMagic[:])
	binary.LittleEndian.PutUint16(b[8:], formatVersion)
	binary.LittleEndian.PutUint16(b[10:], uint16(h.K))
	binary.LittleEndian.PutUint16(b[12:], uint16(h.M))
	binary.LittleEndian.PutUint16(b[14:], uint16(h.Index))
	binary.LittleEndian.PutUint32(b[16:], uint32(h.ChunkSize))
	// b[20:28] reserved, zero
	binary.LittleEndian.PutUint32(b[28:], crc32c(b[:28]))
	return b
}

func parseHeader(b []byte) (header, error) {
	const op = "ec.header"
	if len(b) != HeaderSize || [8]byte(b[:8]) != headerMagic {
		return header{}, shoal.Errorf(op, shoal.KindCorrupt, "no shard header")
	}
	if crc32c(b[:28]) != binary.LittleEndian.Uint32(b[28:]) {
		return header{}, shoal.Errorf(op, shoal.KindCorrupt, "header checksum mismatch")
	}
	if v := binary.LittleEndian.Uint16(b[8:]); v != formatVersion {
		return header{}, shoal.Errorf(op, shoal.KindUnsupported, "shard format version %d", v)
	}
	h := header{
		K:         int(binary.LittleEndian.Uint16(b[10:])),
		M:         int(binary.LittleEndian.Uint16(b[12:])),
		Index:     int(binary.LittleEndian.Uint16(b[14:])),
		ChunkSize: int64(binary.LittleEndian.Uint32(b[16:])),
	}
	if h.K < 1 || h.M < 1 || h.Index >= h.K+h.M || h.ChunkSize < 1 {
		return header{}, shoal.Errorf(op, shoal.KindCorrupt, "bad shard header values")
	}
	return h, nil
}

// footer is what is known once the whole file went through.
type footer struct {
	Size    int64 // user file size
	Adler32 uint32
	MD5     [16]byte
	MTime   time.Time
}

func (f footer) marshal() []byte {
	b := make([]byte, FooterSize)
	binary.LittleEndian.PutUint64(b[0:], uint64(f.Size))
	binary.LittleEndian.PutUint32(b[8:], f.Adler32)
	copy(b[12:28], f.MD5[:])
	binary.LittleEndian.PutUint64(b[28:], uint64(f.MTime.UnixNano()))
	copy(b[36:44], footerMagic[:])
	binary.LittleEndian.PutUint32(b[44:], crc32c(b[:44]))
	return b
}

func parseFooter(b []byte) (footer, error) {
	const op = "ec.footer"
	if len(b) != FooterSize || [8]byte(b[36:44]) != footerMagic {
		return footer{}, shoal.Errorf(op, shoal.KindCorrupt, "no shard footer (incomplete shard?)")
	}
	if crc32c(b[:44]) != binary.LittleEndian.Uint32(b[44:]) {
		return footer{}, shoal.Errorf(op, shoal.KindCorrupt, "footer checksum mismatch")
	}
	f := footer{
		Size:    int64(binary.LittleEndian.Uint64(b[0:])),
		Adler32: binary.LittleEndian.Uint32(b[8:]),
		MTime:   time.Unix(0, int64(binary.LittleEndian.Uint64(b[28:]))),
	}
	copy(f.MD5[:], b[12:28])
	if f.Size < 0 {
		return footer{}, shoal.Errorf(op, shoal.KindCorrupt, "negative file size")
	}
	return f, nil
}

func (f footer) sums() shoal.Sums {
	return shoal.Sums{Adler32: f.Adler32, MD5: append([]byte(nil), f.MD5[:]...)}
}

// geometry maps user bytes to stripes and shard offsets.
type geometry struct {
	k, m  int
	chunk int64 // bytes per shard per full stripe
	size  int64 // user file size
}

func (g geometry) stripeData() int64 { return int64(g.k) * g.chunk }

// stripes is the number of stripes of the file (0 for an empty file).
func (g geometry) stripes() int64 { return (g.size + g.stripeData() - 1) / g.stripeData() }

// stripeLen is the number of user bytes in stripe s.
func (g geometry) stripeLen(s int64) int64 {
	return min(g.stripeData(), g.size-s*g.stripeData())
}

// chunkLen is the bytes each shard holds for stripe s (crc excluded).
func (g geometry) chunkLen(s int64) int64 {
	if s < g.stripes()-1 {
		return g.chunk
	}
	return (g.stripeLen(s) + int64(g.k) - 1) / int64(g.k)
}

// chunkOff is where stripe s starts in every shard object; every stripe
// before it is full.
func (g geometry) chunkOff(s int64) int64 { return HeaderSize + s*(g.chunk+CRCSize) }

// shardSize is the size of each shard object.
func (g geometry) shardSize() int64 {
	n := g.stripes()
	if n == 0 {
		return HeaderSize + FooterSize
	}
	return g.chunkOff(n-1) + g.chunkLen(n-1) + CRCSize + FooterSize
}
