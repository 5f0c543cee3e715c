// Package cache puts caching tiers in front of a shoal.Catalog's read
// path: NewCatalog returns a decorator that is itself a shoal.Catalog and
// passes catalog/catalogtest. It must not import md or catalog: it
// decorates any shoal.Catalog.
//
// # Tiers
//
// Stat asks L1 (in process, optional), then L2 (a shoal.Cache shared by
// every md replica, normally memcached: cache/memcache), then the inner
// catalog, and fills the tiers it missed on the way back. A missing path
// (KindNotFound, or KindNotDir when an ancestor is a file) is cached too,
// for the shorter NegativeTTL. Every mutation goes to the inner catalog
// first, then invalidates. Dead properties (Props) are cached in L2 only,
// under the same generations as Stat (props.go). List, Usage and the rest
// pass through.
// L2 errors are misses, never errors to callers.
//
// # Invalidation across md replicas: generations
//
// Each path p has, in L2, beside its cached answer e:p, two generations:
// random 64-bit values that a mutation replaces with fresh random ones.
//
//   - n:p, the node generation: bumped when p's own entry may have
//     changed (created, overwritten, removed, renamed, its properties
//     patched, a child added or removed — the parent's mtime).
//   - t:p, the tree generation: bumped when what lies below p may have
//     changed as a whole (p removed, renamed away, moved or copied onto,
//     or created — paths below a new file turn from "not found" into "not
//     a directory").
//
// A cached answer for p records the generations it was read under: t:a for
// every proper ancestor a of p except the root (which cannot be removed or
// renamed), and n:p. It is served only while all of them are unchanged. So
// a rename or removal of a directory d costs two memcached writes (t:d and
// n:d, plus n of the parent) however big its subtree, and every old
// descendant answer dies with it: its record of t:d no longer matches.
//
// Keys are KeyPrefix, a letter, and 128 bits of SHA-256 of the path in
// base64url (paths may be 4096 bytes of any character; memcached keys are
// at most 250 printable bytes); a positive answer also carries its path,
// checked on read.
//
// Races. A filler records the generations it read before it asked the
// catalog; a writer bumps generations after its commit. If a commit lands
// between a filler's catalog read and its L2 write, the writer's bump
// comes after the filler's generation read, so the filled value is born
// stale and is never served. A generation that is missing (never set,
// evicted, memcached restarted) is set to a fresh random value before the
// catalog is read; as values are never reused, an evicted generation only
// turns the answers that depended on it into misses. Hence, with L1 off,
// once a mutation is acknowledged every md sharing the memcached answers
// the new state (DESIGN.md contract 3; TestCoherenceTwoMDs proves it for
// each mutation kind, with the old answers cached beforehand).
//
// Cost. A Stat of a path at depth d (the root's children have depth 1)
// reads d+1 keys — d generations and the answer — with one multi-get: one
// "get k1 k2 …" per memcached server holding one of them, all written
// before any reply is read, in the caller's goroutine, so one round trip
// of latency (cache/memcache's GetInto; a tier with only GetMulti pays a
// map, and one without it d+1 sequential Gets). A hit decodes the answer: allocations, but
// no further round trip. A miss adds the catalog query and one Set to
// fill (plus one Set per missing generation, rare). A mutation adds one
// round trip: the Sets of its two to six keys, written together to each
// server (cache/memcache's SetMulti; a tier without it gets them as
// parallel Sets). The price of this scheme
// over a single global generation is the d extra keys per multi-get; in
// return a directory rename invalidates only its own subtree, not the
// whole cache.
//
// Limits. A mutation whose generation Set fails (memcached reachable by
// other replicas but not by this one, within the timeout) leaves others
// stale for at most L2TTL; Stats().InvalidationErrors counts these. A
// FinishUpload that fails ambiguously (catalog unreachable mid-commit)
// names no path to invalidate; the same TTL bound applies.
//
// # L1
//
// The in-process tier holds shared read-only *shoal.Entry values (and the
// negative errors) in a sharded map; a hit takes a read lock and allocates
// nothing. It is exact for this process's own mutations and stale for
// other replicas' by at most L1TTL; it is off unless Options.L1 is set
// (md turns it on for the embedded single-node setup, and off by default
// when memcached is configured). See l1.go for how it invalidates.
package cache
