package ec

import (
	"bytes"
	"context"
	"testing"

	"shoal"
	"shoal/diskserver"
	"shoal/storetest"
)

// TestDegradedLocal: with any M shard stores emptied of an object, it reads
// byte-exact; with M+1 gone, KindUnavailable. Shards are removed through the
// stores and brought back by Repair.
func TestDegradedLocal(t *testing.T) {
	const stripe = 16 << 10
	ctx := context.Background()
	shards, dirs := localShards(t, 6)
	s, err := New(Options{K: 4, M: 2, StripeSize: stripe, Shards: shards})
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for i, n := range sizes(stripe) {
		files[idFor(i)] = storetest.Data(uint64(i+10), n)
		if _, _, err := s.Create(ctx, idFor(i), bytes.NewReader(files[idFor(i)])); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range pairs(6) {
		for id, want := range files {
			for _, i := range p {
				shards[i].Remove(ctx, id)
			}
			got, err := readAll(t, s, id)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("shards %v gone, %s (%d bytes): err %v, equal %v", p, id, len(want), err, bytes.Equal(got, want))
			}
			rep, err := s.Verify(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if bad := rep.Bad(); len(bad) != 2 || bad[0] != p[0] || bad[1] != p[1] || !rep.SumsOK {
				t.Fatalf("Verify with shards %v gone: bad %v, sums ok %v", p, bad, rep.SumsOK)
			}
			rr, err := Repair(ctx, s, id, nil)
			if err != nil || len(rr.Rebuilt) != 2 {
				t.Fatalf("Repair %v: %+v, %v", p, rr, err)
			}
			if rep, err := s.Verify(ctx, id); err != nil || !rep.Healthy() {
				t.Fatalf("after Repair: %+v, %v", rep, err)
			}
		}
	}
	// Three gone: unavailable, never wrong bytes.
	id := idFor(5)
	for _, i := range []int{0, 3, 5} {
		shards[i].Remove(ctx, id)
	}
	if _, err := readAll(t, s, id); !shoal.IsKind(err, shoal.KindUnavailable) {
		t.Errorf("3 of 6 shards gone: %v, want unavailable", err)
	}
	_ = dirs
}

// TestCorruptLocal: flipped bytes in a shard file are caught by the chunk
// crc, reconstructed around, reported by Verify and fixed by Repair.
func TestCorruptLocal(t *testing.T) {
	const stripe = 16 << 10
	ctx := context.Background()
	shards, dirs := localShards(t, 6)
	s, err := New(Options{K: 4, M: 2, StripeSize: stripe, Shards: shards})
	if err != nil {
		t.Fatal(err)
	}
	data := storetest.Data(99, 5*stripe+777)
	id := "c0ffee"
	if _, _, err := s.Create(ctx, id, bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	// Corrupt stripe 2 on data shard 1 and stripe 4 on data shard 3.
	chunk := int64(stripe / 4)
	flipBytes(t, shardFile(t, dirs[1], id), HeaderSize+2*(chunk+CRCSize)+10, 3)
	flipBytes(t, shardFile(t, dirs[3], id), HeaderSize+4*(chunk+CRCSize)+chunk-1, 1)
	got, err := readAll(t, s, id)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read with corrupt chunks: err %v, equal %v", err, bytes.Equal(got, data))
	}
	rep, err := s.Verify(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if bad := rep.Bad(); len(bad) != 2 || bad[0] != 1 || bad[1] != 3 || rep.Shards[1].BadChunks != 1 || !rep.SumsOK {
		t.Fatalf("Verify: %+v", rep)
	}
	// Rebuild shard 1 onto a fresh store, shard 3 in place.
	fresh, _ := diskserver.NewStore([]string{t.TempDir()}, 0)
	rr, err := Repair(ctx, s, id, map[int]shoal.BlobStore{1: fresh})
	if err != nil || len(rr.Rebuilt) != 2 {
		t.Fatalf("Repair: %+v, %v", rr, err)
	}
	shards[1] = fresh
	s2, _ := New(Options{K: 4, M: 2, StripeSize: stripe, Shards: shards})
	if rep, err := s2.Verify(ctx, id); err != nil || !rep.Healthy() {
		t.Fatalf("after Repair: %+v, %v", rep, err)
	}
	// Now any two others may go.
	shards[0].Remove(ctx, id)
	shards[4].Remove(ctx, id)
	if got, err := readAll(t, s2, id); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("after repair, 2 gone: %v", err)
	}
}

// TestVerifyNoUsableShard: Verify of an object none of whose shards can be
// used answers an error, never a panic: its geometry comes from the
// shards, so with none it is unknown (a zero stripe size divided the
// count of stripes by zero, and a scrub took the whole process down — as
// on 32-bit ARM, where no shard of 2 GiB or more could be opened).
func TestVerifyNoUsableShard(t *testing.T) {
	ctx := context.Background()
	shards, dirs := localShards(t, 3)
	s, err := New(Options{K: 2, M: 1, StripeSize: 16 << 10, Shards: shards})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Verify(ctx, "c0ffee"); !shoal.IsKind(err, shoal.KindNotFound) {
		t.Errorf("Verify of an object never written: %v, want not found", err)
	}
	for i, id := range []string{"c0ffee", "c0ffef"} {
		if _, _, err := s.Create(ctx, id, bytes.NewReader(storetest.Data(uint64(i), 40<<10))); err != nil {
			t.Fatal(err)
		}
	}
	for i := range shards {
		shards[i].Remove(ctx, "c0ffee")
		flipBytes(t, shardFile(t, dirs[i], "c0ffef"), 0, 4) // every header unreadable
	}
	if _, err := s.Verify(ctx, "c0ffee"); !shoal.IsKind(err, shoal.KindNotFound) {
		t.Errorf("Verify with every shard removed: %v, want not found", err)
	}
	rep, err := s.Verify(ctx, "c0ffef")
	if !shoal.IsKind(err, shoal.KindUnavailable) || rep == nil || len(rep.Bad()) != 3 || rep.Healthy() {
		t.Errorf("Verify with every shard corrupt: %+v, %v; want unavailable, 3 bad shards", rep, err)
	}
}

// TestRepairAbsentNeedsTarget: a shard a degraded write left out (its
// store Absent) is not "rebuilt in place" into the discarding Absent —
// which reported it rebuilt while nothing was kept — but skipped until a
// target is given, then rebuilt there.
func TestRepairAbsentNeedsTarget(t *testing.T) {
	ctx := context.Background()
	shards, _ := localShards(t, 6)
	full, err := New(Options{K: 4, M: 2, StripeSize: 16 << 10, Shards: shards})
	if err != nil {
		t.Fatal(err)
	}
	degraded := append([]shoal.BlobStore{}, shards...)
	degraded[5] = Absent{}
	s, err := New(Options{K: 4, M: 2, StripeSize: 16 << 10, Shards: degraded})
	if err != nil {
		t.Fatal(err)
	}
	want := storetest.Data(7, 100_000)
	if _, _, err := s.Create(ctx, idFor(42), bytes.NewReader(want)); err != nil {
		t.Fatal(err)
	}
	rr, err := Repair(ctx, s, idFor(42), nil)
	if err != nil || len(rr.Rebuilt) != 0 || len(rr.Skipped) != 1 || rr.Skipped[0].Index != 5 {
		t.Fatalf("Repair without a target: %+v, %v; want shard 5 skipped, nothing rebuilt", rr, err)
	}
	rr, err = Repair(ctx, s, idFor(42), map[int]shoal.BlobStore{5: shards[5]})
	if err != nil || len(rr.Rebuilt) != 1 || rr.Rebuilt[0].Index != 5 || rr.Rebuilt[0].InPlace {
		t.Fatalf("Repair onto a target: %+v, %v", rr, err)
	}
	if rep, err := full.Verify(ctx, idFor(42)); err != nil || !rep.Healthy() {
		t.Errorf("all six shards after the repair: %+v, %v", rep, err)
	}
}
