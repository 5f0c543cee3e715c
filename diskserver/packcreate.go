package diskserver

import (
	"bytes"
	"context"
	"crypto/md5"
	"hash/adler32"
	"hash/crc32"
	"io"
	"time"

	"shoal"
)

// DefaultPackMax is the largest staged object a disk keeps in a pack
// rather than in a file of its own (see packs.go).
const DefaultPackMax = 64 << 10

// MaxPackMax bounds Store.packMax: a packed create reads its whole body
// into one of the pooled copy buffers.
const MaxPackMax = copyBufSize - recHeaderSize - 1

// SetPackMax sets the largest staged object kept in a pack: 0 for
// DefaultPackMax, < 0 for none (every object a file).
func (s *Store) SetPackMax(n int64) {
	switch {
	case n == 0:
		n = DefaultPackMax
	case n < 0:
		n = -1
	}
	s.packMax = min(n, MaxPackMax)
}

// inPacks runs fn (publish, remove) on id in the packs of each disk
// until one holds it.
func (s *Store) inPacks(id string, fn func(*packSet, string) (found bool, err error)) (bool, error) {
	for _, d := range s.disks {
		if d.packs == nil {
			continue
		}
		if found, err := fn(d.packs, id); found || err != nil {
			return true, err
		}
	}
	return false, nil
}

// createPacked reads a body of at most packMax bytes and writes it into a
// pack of d as a staged object; a longer body (its declared length was
// wrong) becomes a file of its own. In createDeferred mode it returns
// before the record is durable, and durable waits for that; otherwise
// durable is nil.
func (d *disk) createPacked(ctx context.Context, id string, r *roomReader, mode createMode) (shoal.ObjectInfo, shoal.Sums, func() error, error) {
	const op = "diskserver.CreateStaged"
	bufp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bufp)
	rec := (*bufp)[:recHeaderSize+r.s.packMax+1]
	n, err := io.ReadFull(r, rec[recHeaderSize:])
	switch err {
	case nil:
		info, sums, err := d.createFile(ctx, id, io.MultiReader(bytes.NewReader(rec[recHeaderSize:]), r), true, !r.s.noMD5)
		return info, sums, nil, err
	case io.EOF, io.ErrUnexpectedEOF:
	default:
		return shoal.ObjectInfo{}, shoal.Sums{}, nil, readErr(op, id, err)
	}
	if err := ctx.Err(); err != nil {
		return shoal.ObjectInfo{}, shoal.Sums{}, nil, shoal.E(op, id, shoal.KindTimeout, err)
	}
	data := rec[recHeaderSize : recHeaderSize+n]
	sums := shoal.Sums{Adler32: adler32.Checksum(data)}
	if !r.s.noMD5 {
		sum := md5.Sum(data)
		sums.MD5 = sum[:]
	}
	now := time.Now()
	h := recordHeader{id: id, size: int64(n), mtimeNs: now.UnixNano(), state: recStaged,
		adler32: sums.Adler32, crc: crc32.Checksum(data, castagnoli)}
	durable, err := d.packs.put(id, rec[:recHeaderSize+n], h)
	if err == nil && mode != createDeferred {
		if err = durable(); err != nil {
			d.packs.drop(id)
		}
		durable = nil
	}
	if err != nil {
		return shoal.ObjectInfo{}, shoal.Sums{}, nil, shoal.E(op, id, diskErrKind(err), err)
	}
	if durable != nil {
		inner := durable
		durable = func() error {
			if err := inner(); err != nil {
				return shoal.E(op, id, diskErrKind(err), err)
			}
			return nil
		}
	}
	return shoal.ObjectInfo{ID: id, Size: int64(n), ModTime: now}, sums, durable, nil
}
