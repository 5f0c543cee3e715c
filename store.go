package shoal

import (
	"context"
	"io"
	"os"
	"time"
)

// ObjectInfo describes one stored object.
type ObjectInfo struct {
	ID      string
	Size    int64
	ModTime time.Time
}

// Object is an open object, readable at any offset by several readers.
type Object interface {
	io.ReaderAt
	io.Closer
	Size() int64
}

// Space is what a data server has.
type Space struct {
	Free, Total int64
}

// BlobStore is the storage of a data server: immutable objects under ids.
// Implemented by the local disks of a diskserver (diskserver/), by the HTTP
// client of a remote data server, and by the erasure-coded engine (ec/)
// over those.
// Object ids are 1–64 characters of [0-9a-f]; anything else is
// KindInvalid.
type BlobStore interface {
	// Create streams r into a new object and returns once it is durable
	// (fsync'd) and complete, with its size and checksums (adler32 and md5
	// always). A failed or short read leaves no object behind. KindExist if
	// id exists; KindInsufficient if no disk has room.
	Create(ctx context.Context, id string, r io.Reader) (ObjectInfo, Sums, error)

	// Open opens an object for reading; KindNotFound if missing.
	Open(ctx context.Context, id string) (Object, error)

	// Remove deletes an object; removing a missing object succeeds.
	Remove(ctx context.Context, id string) error

	// Walk calls fn for every object, in no particular order.
	Walk(ctx context.Context, fn func(ObjectInfo) error) error

	// Space reports free and total bytes.
	Space(ctx context.Context) (Space, error)
}

// HeadOpener is an optional BlobStore method for stores where every
// request costs a round trip (a remote data server): open id and read its
// first bytes into head (n of them: len(head), or the whole object if it
// is shorter) in one request, which also tells the size. The gw opens
// shards this way: a small shard whole, a large one's header, in one GET
// instead of a HEAD and reads.
type HeadOpener interface {
	OpenHead(ctx context.Context, id string, head []byte) (obj Object, n int, err error)
}

// RangeOpener is an optional BlobStore method for stores where every
// request costs a round trip (a remote data server): a reader of the n
// bytes (n ≥ 1) at off of object id, streamed in one request as the
// caller reads them, instead of a request per ReadAt. The reader yields
// exactly those n bytes or fails (a span that is not within the object is
// an error, at open or at the latest on reading its end); Close ends the
// request early. KindNotFound if id is missing. The gw streams the data
// shards of a large GET this way; stores without it are read with ReadAt.
type RangeOpener interface {
	OpenRange(ctx context.Context, id string, off, n int64) (io.ReadCloser, error)
}

// FileObject is an optional Object method for objects kept in a local
// file, whole or as one record of a pack: that file and the offset of
// the object's first byte in it, which a server sends with sendfile(2)
// (zero copy). The file may be shared by every reader of the object at once
// (diskserver keeps objects' files open): read it at explicit offsets
// only (ReadAt, sendfile with an offset, as netguard.FileBody does),
// never through its position, and never close it: Close the Object. md
// serves `shoal all`'s own objects this way (see md.Options.LocalStore).
type FileObject interface {
	OSFile() (f *os.File, base int64)
}

// SizedCreator is an optional BlobStore method: Create for a body of
// known size, refused at once (KindInsufficient) when the store has no
// room for size bytes rather than after writing part of it.
type SizedCreator interface {
	CreateSized(ctx context.Context, id string, r io.Reader, size int64) (ObjectInfo, Sums, error)
}

// StagedCreator is an optional BlobStore method set for a store md
// writes itself (`shoal all`'s own data server), so that a create needs
// one catalog transaction and no reservation. An object created staged is
// durable but not among the store's objects (Open and Walk do not see
// it) until Publish names it; Remove removes it staged or not. A crash
// can leave objects staged: Staged lists them, and whoever owns the
// catalog publishes those an entry names and removes the others before
// serving (md.New does). So a crash between an object's fsync and its
// commit leaks nothing, as a reservation's expiry would have ensured.
type StagedCreator interface {
	// CreateStaged is CreateSized (size < 0: unknown) of a staged object.
	CreateStaged(ctx context.Context, id string, r io.Reader, size int64) (ObjectInfo, Sums, error)
	// Publish makes staged object id one of the store's objects;
	// KindNotFound if it is not staged.
	Publish(ctx context.Context, id string) error
	// Staged lists the objects created staged and neither published nor
	// removed.
	Staged(ctx context.Context) ([]string, error)
}

// DeferredStager is an optional StagedCreator method set for a store
// whose staged creates can return before the object's bytes are durable,
// so that md makes them durable (durable) while it commits the catalog
// entry, not before: a create then waits for the longer of the two
// syncs, not for both in turn. A 201 still waits for both. The price is
// at a crash: an entry can be committed whose object never became
// durable (its create was never acknowledged). So the store keeps what
// it needs to settle that: a staged object's bytes are checked at start
// (one that does not match its checksums is dropped, its entry then names
// nothing), and Unsettled says since when, after a crash, entries naming
// objects the store lacks can be such never-acknowledged creates.
type DeferredStager interface {
	StagedCreator
	// CreateStagedDeferred is CreateStaged that may return before the
	// object is durable; durable returns once it is, or why it cannot be
	// known to be (the object then stays staged until a restart checks
	// it). The caller calls durable once, soon: a clean stop waits for it.
	// A sync begun after the write covers it, whenever durable is called:
	// the creates that wrote before one sync began share it (md calls
	// durable as the catalog batch holding the create begins).
	// durable is nil when the object was durable already on return.
	CreateStagedDeferred(ctx context.Context, id string, r io.Reader, size int64) (info ObjectInfo, sums Sums, durable func() error, err error)
	// Unsettled: ok if a run that made deferred creates ended without a
	// clean stop; since is when it began.
	Unsettled() (since time.Time, ok bool)
	// MaxDeferred is the size of the largest object CreateStagedDeferred
	// can have returned before it was durable, in any run: a larger one
	// was durable on return, so a crash cannot have lost it.
	MaxDeferred() int64
	// Settled records that whoever owns the catalog has settled them.
	Settled() error
}

// ValidObjectID reports whether id is a well-formed object id.
func ValidObjectID(id string) bool {
	if len(id) == 0 || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
