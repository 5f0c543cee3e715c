package catalog

import (
	"context"
	"crypto/md5"
	"hash/adler32"
	"strings"
	"time"

	"shoal"
)

// Bulk loading sizes: rows per INSERT statement and per transaction.
const (
	BulkRowsPerInsert = 500
	BulkRowsPerTx     = 5000
	MaxBulkFileSize   = 64 << 10 // CreateFiles keeps content inline
)

// CreateFiles inserts inline files named names into the existing directory
// dir, each holding size zero bytes, with multi-row INSERTs (for
// benchmarks and `shoal admin populate`). Each batch of BulkRowsPerTx
// files is one transaction: on error, earlier batches stay. KindExist if a
// name is taken (that batch is rolled back), KindNotFound/KindNotDir for a
// bad dir, KindInvalid for a bad name or size.
func (db *DB) CreateFiles(ctx context.Context, dir string, names []string, size int64) error {
	const op = "catalog.CreateFiles"
	if size < 0 || size > MaxBulkFileSize {
		return shoal.Errorf(op, shoal.KindInvalid, "size %d not in 0..%d", size, MaxBulkFileSize)
	}
	for _, n := range names {
		if n == "" || n == "." || n == ".." || len(n) > shoal.MaxNameLen || strings.ContainsAny(n, "/\x00") {
			return shoal.Errorf(op, shoal.KindInvalid, "bad file name %q", n)
		}
	}
	data := make([]byte, size)
	sum := md5.Sum(data)
	adler := int64(adler32.Checksum(data))
	now := time.Now().UnixNano()
	for len(names) > 0 {
		batch := names[:min(BulkRowsPerTx, len(names))]
		names = names[len(batch):]
		err := db.inTxAlone(ctx, op, dir, func(t *tx) error {
			d, _, quotas, err := t.lockPath(ctx, dir)
			if err != nil {
				return err
			}
			if d == nil {
				return shoal.E(op, dir, shoal.KindNotFound)
			}
			if !d.isDir {
				return shoal.E(op, dir, shoal.KindNotDir)
			}
			for rest := batch; len(rest) > 0; {
				chunk := rest[:min(BulkRowsPerInsert, len(rest))]
				rest = rest[len(chunk):]
				var q strings.Builder
				q.WriteString(`INSERT INTO entries (parent_id, name, path, path_hash, is_dir, size, mtime_ns, ctime_ns,
					version, adler32, md5, inline, layout) VALUES `)
				args := make([]any, 0, 11*len(chunk))
				for i, n := range chunk {
					if i > 0 {
						q.WriteByte(',')
					}
					q.WriteString("(?,?,?,?,0,?,?,?,1,?,?,?,'')")
					p := shoal.JoinPath(dir, n)
					args = append(args, d.id, n, p, pathHash(p), size, now, now, adler, sum[:], data)
				}
				if _, err := t.exec(ctx, q.String(), args...); err != nil {
					if db.isDup(err) {
						return shoal.Errorf(op, shoal.KindExist, "a name in this batch exists in %s", dir)
					}
					return err
				}
			}
			if d.quota {
				quotas = append(quotas, d.id)
			}
			if len(quotas) > 0 {
				return t.charge(ctx, op, dir, quotas, size*int64(len(batch)), int64(len(batch)), 0, nil)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
