package gw

import (
	"context"
	"io"

	"shoal"
)

// layoutStore is what the HTTP front needs of a layout's store: the
// erasure-coded Store for ec:K+M, Mirror for replica:N.
type layoutStore interface {
	shoal.BlobStore
	CreateShards(ctx context.Context, id string, r io.Reader) (*Written, error)
}

var (
	_ layoutStore = (*Store)(nil)
	_ layoutStore = (*Mirror)(nil)
)

// storeFor builds the store of a request's layout over its servers.
func (s *Server) storeFor(l shoal.Layout, shards []shoal.BlobStore) (layoutStore, error) {
	if l.Kind == shoal.LayoutReplica {
		return NewMirror(shards)
	}
	return New(Options{K: l.K, M: l.M, StripeSize: s.opts.StripeSize, Shards: shards})
}
