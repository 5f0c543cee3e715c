package ec

import (
	"context"
	"io"

	"shoal"
)

// LayoutStore is the store of one layout over its shard stores: Store for
// ec:K+M, Mirror for replica:N. CreateShards tells what each shard store
// got (for md's commit); OpenAt opens for reads from a user offset on (the
// start of a Range), which lets Store skip heads it would not use.
type LayoutStore interface {
	shoal.BlobStore
	CreateShards(ctx context.Context, id string, r io.Reader) (*Written, error)
	OpenAt(ctx context.Context, id string, off int64) (shoal.Object, error)
}

var (
	_ LayoutStore = (*Store)(nil)
	_ LayoutStore = (*Mirror)(nil)
)

// ForLayout builds the store of layout l over shards (in shard or copy
// order); stripeSize applies to ec:K+M (0: DefaultStripeSize).
func ForLayout(l shoal.Layout, stripeSize int, shards []shoal.BlobStore) (LayoutStore, error) {
	if l.Kind == shoal.LayoutReplica {
		return NewMirror(shards)
	}
	return New(Options{K: l.K, M: l.M, StripeSize: stripeSize, Shards: shards})
}
