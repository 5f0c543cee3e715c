package catalog_test

import (
	"context"
	"testing"
	"time"

	"shoal"
)

// Over MariaDB, an upload's commit checks its client against the locks
// taken since the reservation (LockedCommit) at no statement of its own
// while no live lock is rooted at its path or an ancestor: the count
// rides in the ancestors' read. With one there, the check's query runs.
func TestMariaDBCommitLockCheckTrips(t *testing.T) {
	db := openMariaDB(t)
	ctx := context.Background()
	now := time.Now()
	for _, d := range []string{"/t", "/elsewhere"} {
		if _, err := db.Mkdir(ctx, d, now); err != nil {
			t.Fatal(err)
		}
	}
	commitTrips := func(id, client string) uint64 {
		t.Helper()
		u := &shoal.Upload{ID: id, Path: "/t/" + id, Servers: []string{"s1"}, Object: "o" + id,
			Layout: shoal.DefaultLayout, Expires: time.Now().Add(time.Hour), Client: client}
		if err := db.BeginUpload(ctx, u); err != nil {
			t.Fatal(err)
		}
		before := db.RoundTrips()
		if _, err := db.FinishUpload(ctx, &shoal.Commit{Upload: id, Size: 1, Sums: shoal.Sums{Adler32: 1}, MTime: now,
			Replicas: []shoal.Replica{{Server: "s1", Object: "o" + id, Size: 1, Sum: 1}}}, now); err != nil {
			t.Fatalf("FinishUpload %s: %v", id, err)
		}
		return db.RoundTrips() - before
	}
	lock := func(token, root string) {
		t.Helper()
		l := &shoal.Lock{Token: "opaquelocktoken:" + token, Root: root, Infinity: true, Exclusive: true,
			Principal: "user:bob", Timeout: time.Hour, Expires: time.Now().Add(time.Hour)}
		if err := db.CreateLock(ctx, l, shoal.LockLimits{}, time.Now()); err != nil {
			t.Fatal(err)
		}
	}

	unchecked := commitTrips("a", "") // no client: no check at all
	if n := commitTrips("b", "user:bob"); n != unchecked {
		t.Errorf("commit checked against no lock: %d round trips, want %d (as unchecked)", n, unchecked)
	}
	lock("l1", "/elsewhere")
	if n := commitTrips("c", "user:bob"); n != unchecked {
		t.Errorf("commit with a lock elsewhere: %d round trips, want %d", n, unchecked)
	}
	lock("l2", "/t") // bob's own: the commit passes, after asking
	if n := commitTrips("d", "user:bob"); n != unchecked+1 {
		t.Errorf("commit under a lock on its directory: %d round trips, want %d (the check's query)", n, unchecked+1)
	}
}
