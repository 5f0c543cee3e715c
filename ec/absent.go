package ec

import (
	"context"
	"io"

	"shoal"
)

// Absent stands for a shard a degraded write leaves out (its server
// is empty in the signed URL: md's md.degraded_writes, when the pool has
// fewer live servers than the layout's width). Writing it discards the
// bytes; reading it finds nothing, so reads reconstruct around it, and
// scrub and repair see the shard missing and repair rebuilds it onto a
// real server.
type Absent struct{}

var _ shoal.BlobStore = Absent{}

func (Absent) Create(_ context.Context, id string, r io.Reader) (shoal.ObjectInfo, shoal.Sums, error) {
	n, err := io.Copy(io.Discard, r)
	return shoal.ObjectInfo{ID: id, Size: n}, shoal.Sums{}, err
}

func (Absent) Open(_ context.Context, id string) (shoal.Object, error) {
	return nil, shoal.Errorf("ec.absent", shoal.KindNotFound, "%s: shard left out by a degraded write", id)
}

func (Absent) Remove(context.Context, string) error                     { return nil }
func (Absent) Walk(context.Context, func(shoal.ObjectInfo) error) error { return nil }
func (Absent) Space(context.Context) (shoal.Space, error)               { return shoal.Space{}, nil }
