package shoal

import "context"

// Quota is a limit on a directory's subtree: the bytes of its files and
// the number of its entries (files and directories below it). Every
// quota on a path's ancestors governs it, so a write must fit all of
// them: an inner quota never lets an outer one be overshot.
type Quota struct {
	Dir       string `json:"dir"`
	Bytes     int64  `json:"bytes"`      // limit on UsedBytes+Reserved; 0: none
	Files     int64  `json:"files"`      // limit on UsedFiles; 0: none
	UsedBytes int64  `json:"used_bytes"` // sizes of the files below Dir
	UsedFiles int64  `json:"used_files"` // entries below Dir (files and directories)
	// Reserved is what uploads in flight below Dir hold: made by md before
	// it redirects a PUT, moved to UsedBytes when the file is committed,
	// released when the upload fails or expires.
	Reserved int64 `json:"reserved"`
}

// QuotaKeep, given to SetQuota for a limit, leaves that limit as it is.
// Far from any size a caller could compute by mistake.
const QuotaKeep int64 = -1 << 63

// Room is how many more bytes q lets be written (0 when full or over), or
// -1 when q has no byte limit.
func (q Quota) Room() int64 {
	if q.Bytes <= 0 {
		return -1
	}
	return max(q.Bytes-q.UsedBytes-q.Reserved, 0)
}

// QuotaStore is the part of Catalog that keeps directory quotas. Their
// counters are kept exact by every write in the transaction that makes
// it (PutInline, FinishUpload, Mkdir, Remove, Move, Copy) and by the
// reservations (BeginUpload, ExpireUploads): a write that does not fit a
// governing quota is KindQuota and changes nothing.
type QuotaStore interface {
	// SetQuota puts a quota on dir, or changes its limits, and counts what
	// dir holds and what uploads below it reserve, in one transaction.
	// Each of bytes and files is a new limit (> 0), 0 to remove that
	// limit, or QuotaKeep to leave it as it is (none on a new quota): the
	// merge with the limits already set happens in the transaction, on the
	// locked row, so two admins changing one limit each cannot lose the
	// other's. A limit under what is used already is allowed: writes are
	// then refused until enough is freed. KindNotFound if dir is missing,
	// KindNotDir if it is a file, KindInvalid for negative limits or when
	// no limit would be left (RemoveQuota drops a quota).
	SetQuota(ctx context.Context, dir string, bytes, files int64) (Quota, error)

	// RemoveQuota drops dir's quota: KindNotFound if it has none.
	RemoveQuota(ctx context.Context, dir string) error

	// Quotas lists every quota, by directory path.
	Quotas(ctx context.Context) ([]Quota, error)

	// QuotasFor returns the quotas that govern path: on path itself (a
	// directory) and on its ancestors, nearest first.
	QuotasFor(ctx context.Context, path string) ([]Quota, error)
}
