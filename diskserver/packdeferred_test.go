package diskserver

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"shoal"
	"shoal/storetest"
)

// TestDeferredCreate: a deferred create is staged (listed, not served)
// when it returns, and published once durable says so; an object too
// big for a pack is durable at once and has no durable to wait for.
func TestDeferredCreate(t *testing.T) {
	ctx := context.Background()
	s := newPackStore(t, t.TempDir())
	small, big := storetest.Data(1, 20000), storetest.Data(2, 200<<10)
	for id, data := range map[string][]byte{"aa": small, "bb": big} {
		info, _, durable, err := s.CreateStagedDeferred(ctx, id, bytes.NewReader(data), int64(len(data)))
		if err != nil || info.Size != int64(len(data)) {
			t.Fatalf("%s: %v, %v", id, info, err)
		}
		if _, err := s.Open(ctx, id); err == nil {
			t.Errorf("%s is served before it is published", id)
		}
		if id == "bb" {
			if durable != nil {
				t.Error("a file, durable on return, comes with a durable to wait for")
			}
		} else if err := durable(); err != nil {
			t.Fatal(err)
		}
		publish(t, s, id)
		wantContent(t, s, id, data)
	}
	if !s.disks[0].packs.has("aa") || s.disks[0].packs.has("bb") {
		t.Error("the small object is not in a pack, or the big one is")
	}
}

// TestStagedBytesCheckedAtStart: a staged record whose bytes are not the
// ones its header's checksum names (made durable after its commit, and
// a crash came first) is dropped by the scan; a whole one stays staged.
func TestStagedBytesCheckedAtStart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := newPackStore(t, dir)
	whole, torn := storetest.Data(3, 30000), storetest.Data(4, 30000)
	stage(t, s, "a1", whole)
	stage(t, s, "a2", torn)
	p := s.disks[0].packs
	p.mu.Lock()
	a2 := *p.index["a2"]
	p.mu.Unlock()
	// A block of its bytes as the disk may hold it: never written.
	if _, err := a2.p.f.WriteAt(make([]byte, packAlign), a2.off+2*packAlign); err != nil {
		t.Fatal(err)
	}

	s2 := newPackStore(t, dir)
	ids, err := s2.Staged(ctx)
	if err != nil || len(ids) != 1 || ids[0] != "a1" {
		t.Fatalf("staged after the restart: %v (%v), want only a1", ids, err)
	}
	publish(t, s2, "a1")
	wantContent(t, s2, "a1", whole)
}

// TestUnsettledMarker: a run that wrote records and stopped without a
// clean stop leaves its start time for the next one (Unsettled) until
// Settled; a clean stop leaves nothing, unless a crashed run is still to
// be settled.
func TestUnsettledMarker(t *testing.T) {
	dir := t.TempDir()
	before := time.Now()
	s := newPackStore(t, dir)
	if _, ok := s.Unsettled(); ok {
		t.Fatal("a new store is unsettled")
	}
	stage(t, s, "b1", []byte("x"))
	// A crash: the store is dropped without FlushStaged.
	s2 := newPackStore(t, dir)
	since, ok := s2.Unsettled()
	if !ok || since.After(before) || since.Before(before.Add(-2*time.Minute)) {
		t.Fatalf("after a crash: unsettled %v since %v, want since about a minute before %v", ok, since, before)
	}
	// A clean stop of a run that has not settled it keeps it.
	if err := s2.FlushStaged(); err != nil {
		t.Fatal(err)
	}
	s3 := newPackStore(t, dir)
	if again, ok := s3.Unsettled(); !ok || !again.Equal(since) {
		t.Fatalf("after a clean stop of an unsettled run: %v %v, want %v", ok, again, since)
	}
	if err := s3.Settled(); err != nil {
		t.Fatal(err)
	}
	stage(t, s3, "b2", []byte("y"))
	if err := s3.FlushStaged(); err != nil {
		t.Fatal(err)
	}
	// After the clean stop's marker removal, no record it would not cover.
	if _, _, err := s3.CreateStaged(context.Background(), "b3", bytes.NewReader([]byte("z")), 1); !shoal.IsKind(err, shoal.KindUnavailable) {
		t.Fatalf("a packed create after the clean stop: %v, want unavailable", err)
	}
	// The refusal changed nothing: no record, no marker.
	if s3.disks[0].packs.has("b3") {
		t.Error("the refused create is in the packs")
	}
	if _, err := os.Stat(filepath.Join(dir, packsDir, unsettledName)); !os.IsNotExist(err) {
		t.Errorf("the refused create left the marker: %v", err)
	}
	if _, ok := newPackStore(t, dir).Unsettled(); ok {
		t.Fatal("unsettled after a settled run's clean stop")
	}
}
