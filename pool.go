package shoal

import (
	"context"
	"time"
)

// DefaultPool is the pool of the root directory unless an operator maps it
// elsewhere; its layout is DefaultLayout unless set with PutPool.
const DefaultPool = "default"

// GatewayPool is the pool gws register in (their heartbeats say so): md
// sends ec:K+M files and replica:N writes (N > 1) through a live gw of
// it, and never places data on its members, which hold none.
const GatewayPool = "gw"

// PoolStore is the part of Catalog that knows the named pools with their
// layouts, and which directories write to which pool.
type PoolStore interface {
	// PutPool creates a pool or changes its layout. Files already written
	// keep the layout they were written with. KindInvalid for an empty
	// name or a zero layout.
	PutPool(ctx context.Context, p Pool) error

	// Pools lists the pools by name, DefaultPool always included.
	Pools(ctx context.Context) ([]Pool, error)

	// SetDirPool makes new files at or below dir go to pool (until a
	// deeper directory says otherwise). The mapping follows the directory
	// when it moves. KindNotFound if dir or the pool does not exist,
	// KindNotDir if dir is a file.
	SetDirPool(ctx context.Context, dir, pool string) error

	// PoolFor returns the pool a new file at path gets: that of the
	// nearest ancestor directory (or path itself) with a mapping, else
	// DefaultPool.
	PoolFor(ctx context.Context, path string) (Pool, error)
}

// ReplicaReplacer is the part of Catalog that repair and drain use: it
// points one replica (or shard) row of a file at a new object.
type ReplicaReplacer interface {
	// ReplaceReplica atomically replaces the replica old of the file at
	// path (matched by Server, Object and Shard) with new, and queues
	// old's object for garbage not before graceUntil unless another entry
	// still references it. KindNotFound if the file or that replica row
	// is gone (the file was overwritten or removed meanwhile: the caller
	// then deletes new's object). An old with no Server adds new as the
	// shard Shard of an erasure-coded file that has no row for it (left
	// out by a degraded write); KindExist if the shard has a row.
	ReplaceReplica(ctx context.Context, path string, old, new Replica, graceUntil time.Time) error
}
