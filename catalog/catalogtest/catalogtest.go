// Package catalogtest is the one conformance suite for shoal.Catalog: every
// implementation (each SQL dialect, each caching decorator) runs it with
//
//	catalogtest.Run(t, func(t *testing.T) shoal.Catalog { return open(t) })
//
// open must return a fresh, empty catalog and arrange its Close with
// t.Cleanup. The suite uses only the shoal.Catalog interface and imports
// only the root package.
package catalogtest

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"shoal"
)

// Run runs every conformance test as a subtest.
func Run(t *testing.T, open func(t *testing.T) shoal.Catalog) {
	tests := []struct {
		name string
		fn   func(t *testing.T, c shoal.Catalog)
	}{
		{"Root", testRoot},
		{"MkdirNested", testMkdirNested},
		{"ListSorted", testListSorted},
		{"ListPage", testListPage},
		{"ListSubtrees", testListSubtrees},
		{"NotDirParents", testNotDirParents},
		{"PutInline", testPutInline},
		{"Upload", testUpload},
		{"UploadErrors", testUploadErrors},
		{"ExpireUploads", testExpireUploads},
		{"PendingUploads", testPendingUploads},
		{"Remove", testRemove},
		{"MoveFile", testMoveFile},
		{"MoveDir", testMoveDir},
		{"MoveErrors", testMoveErrors},
		{"Copy", testCopy},
		{"CopyDir", testCopyDir},
		{"LongPathsMoveCopy", testLongPathsMoveCopy},
		{"Props", testProps},
		{"Servers", testServers},
		{"GarbageDueAndDrop", testGarbage},
		{"WalkReplicas", testWalkReplicas},
		{"Usage", testUsage},
		{"ConcurrentMkdir", testConcurrentMkdir},
		{"ConcurrentCreateOnly", testConcurrentCreateOnly},
		{"ConcurrentFinishUpload", testConcurrentFinish},
		{"ConcurrentCreates", testConcurrentCreates},
		{"ConcurrentOverwrites", testConcurrentOverwrites},
		{"CreateAnswersAsStat", testCreateAnswersAsStat},
		{"PutFile", testPutFile},
		{"TxStart", testTxStart},
		{"Pools", testPools},
		{"ReplaceReplica", testReplaceReplica},
		{"Locks", testLocks},
		{"LockLimits", testLockLimits},
		{"ConcurrentLocks", testConcurrentLocks},
		{"LockedCommit", testLockedCommit},
		{"Jobs", testJobs},
		{"ConcurrentClaimJob", testConcurrentClaim},
		{"QuotaSet", testQuotaSet},
		{"QuotaKeepLimits", testQuotaKeepLimits},
		{"QuotaWrites", testQuotaWrites},
		{"QuotaNested", testQuotaNested},
		{"QuotaMoveCopy", testQuotaMoveCopy},
		{"QuotaUploads", testQuotaUploads},
		{"ConcurrentQuota", testConcurrentQuota},
		{"AbortUpload", testAbortUpload},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, open(t))
		})
	}
}

var (
	t0    = time.Unix(1_700_000_000, 123456789)
	grace = time.Unix(1_800_000_000, 0) // far in the future
	later = grace.Add(time.Hour)        // when everything queued is due
)

func ctx(t *testing.T) context.Context { return t.Context() }

// wantKind fails unless err has one of kinds.
func wantKind(t *testing.T, what string, err error, kinds ...shoal.Kind) {
	t.Helper()
	for _, k := range kinds {
		if shoal.IsKind(err, k) {
			var se *shoal.Error
			if !errors.As(err, &se) {
				t.Errorf("%s: error %v is not a *shoal.Error", what, err)
			}
			return
		}
	}
	t.Errorf("%s: got error %v (kind %v), want kind %v", what, err, shoal.KindOf(err), kinds)
}

// result carries a value and an error so that got(f(…)).must(t) can take
// a two-valued call.
type result[T any] struct {
	v   T
	err error
}

func got[T any](v T, err error) result[T] { return result[T]{v, err} }

func (r result[T]) must(t *testing.T) T {
	t.Helper()
	if r.err != nil {
		t.Fatalf("unexpected error: %v", r.err)
	}
	return r.v
}

func ok(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
}

func mkdir(t *testing.T, c shoal.Catalog, paths ...string) {
	t.Helper()
	for _, p := range paths {
		_, err := c.Mkdir(ctx(t), p, t0)
		ok(t, err)
	}
}

func putInline(t *testing.T, c shoal.Catalog, path, data string) *shoal.Entry {
	t.Helper()
	return got(c.PutInline(ctx(t), path, []byte(data), shoal.Sums{Adler32: uint32(len(data))}, t0, shoal.Condition{}, grace)).must(t)
}

var uploadSeq atomic.Int64

// putObjects creates path through an upload whose object is stored on
// servers, and returns the entry.
func putObjects(t *testing.T, c shoal.Catalog, path, object string, size int64, servers ...string) *shoal.Entry {
	t.Helper()
	id := hexID(int(uploadSeq.Add(1)))
	ok(t, c.BeginUpload(ctx(t), &shoal.Upload{ID: id, Path: path, Servers: servers, Object: object,
		Layout: shoal.Layout{Kind: shoal.LayoutReplica, N: len(servers)}, Expires: time.Now().Add(time.Hour)}))
	var reps []shoal.Replica
	for _, s := range servers {
		reps = append(reps, shoal.Replica{Server: s, Object: object, Size: size, Sum: 7})
	}
	return got(c.FinishUpload(ctx(t), &shoal.Commit{Upload: id, Size: size, Sums: shoal.Sums{Adler32: 7}, MTime: t0, Replicas: reps}, grace)).must(t)
}

func hexID(n int) string {
	const digits = "0123456789abcdef"
	b := []byte("00000000")
	for i := len(b) - 1; i >= 0 && n > 0; i-- {
		b[i] = digits[n&15]
		n >>= 4
	}
	return "feed" + string(b)
}

func stat(t *testing.T, c shoal.Catalog, path string) *shoal.Entry {
	t.Helper()
	return got(c.Stat(ctx(t), path)).must(t)
}

func wantMissing(t *testing.T, c shoal.Catalog, paths ...string) {
	t.Helper()
	for _, p := range paths {
		_, err := c.Stat(ctx(t), p)
		wantKind(t, "Stat "+p, err, shoal.KindNotFound)
	}
}

// garbageObjects returns the objects queued for server and due at when.
func garbageObjects(t *testing.T, c shoal.Catalog, server string, when time.Time) map[string]int {
	t.Helper()
	gs := got(c.Garbage(ctx(t), server, when, 10000)).must(t)
	out := map[string]int{}
	for _, g := range gs {
		if g.Server != server {
			t.Errorf("Garbage(%s) returned an item of server %s", server, g.Server)
		}
		out[g.Object]++
	}
	return out
}

func names(es []*shoal.Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
