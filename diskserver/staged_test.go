package diskserver

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestUnstageInBackground: the staged names of published objects go in
// the background, a full batch at once and the rest within
// unstageEvery, with no FlushStaged; Staged never lists an object
// published before it was called, and every published object stays
// readable.
func TestUnstageInBackground(t *testing.T) {
	dir := t.TempDir()
	s, err := NewStore([]string{dir}, -1)
	if err != nil {
		t.Fatal(err)
	}
	s.SetPackMax(-1) // staged names are files' (packs_test.go tests packs)
	ctx := context.Background()
	n := unstageBatch + unstageBatch/2
	ids := make(chan string, n)
	for i := range n {
		ids <- fmt.Sprintf("%04x", i)
	}
	close(ids)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range 16 {
		wg.Go(func() {
			for id := range ids {
				if _, _, err := s.CreateStaged(ctx, id, bytes.NewReader([]byte(id)), int64(len(id))); err != nil {
					errs <- err
					continue
				}
				if err := s.Publish(ctx, id); err != nil {
					errs <- err
				}
				staged, err := s.Staged(ctx)
				if err != nil {
					errs <- err
				}
				if slices.Contains(staged, id) {
					errs <- fmt.Errorf("Staged lists %s, published before the call", id)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if staged, err := s.Staged(ctx); err != nil || len(staged) != 0 {
		t.Fatalf("Staged after every publish: %d objects, %v", len(staged), err)
	}
	stagedNames := func() int {
		es, err := os.ReadDir(filepath.Join(dir, stagedDir))
		if err != nil {
			t.Fatal(err)
		}
		return len(es)
	}
	deadline := time.Now().Add(unstageEvery + 5*time.Second)
	for stagedNames() > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if left := stagedNames(); left > 0 {
		t.Fatalf("%d staged names left %v after the last publish", left, unstageEvery+5*time.Second)
	}
	for i := range n {
		id := fmt.Sprintf("%04x", i)
		o, err := s.Open(ctx, id)
		if err != nil {
			t.Fatalf("published %s: %v", id, err)
		}
		got := make([]byte, len(id))
		if _, err := o.ReadAt(got, 0); err != nil || string(got) != id {
			t.Errorf("published %s reads %q, %v", id, got, err)
		}
		o.Close()
	}

	// FlushStaged (a clean shutdown) removes a fresh name at once.
	if _, _, err := s.CreateStaged(ctx, "ffff", bytes.NewReader(nil), 0); err != nil {
		t.Fatal(err)
	}
	if err := s.Publish(ctx, "ffff"); err != nil {
		t.Fatal(err)
	}
	if err := s.FlushStaged(); err != nil {
		t.Fatal(err)
	}
	if left := stagedNames(); left != 0 {
		t.Errorf("%d staged names left after FlushStaged", left)
	}
}

// TestGroupSyncTickets: writes whose tickets were taken as they were made
// share the first sync begun after all of them, even when their callers
// ask one after the other (md asks as a catalog batch begins); a write
// made after that sync began waits for a sync of its own.
func TestGroupSyncTickets(t *testing.T) {
	syncs := 0
	g := &groupSync{do: func() error { syncs++; return nil }}
	var tickets []uint64
	for range 8 {
		tickets = append(tickets, g.take())
	}
	for _, tk := range tickets {
		if err := g.syncTicket(tk); err != nil {
			t.Fatal(err)
		}
	}
	if syncs != 1 {
		t.Fatalf("8 writes made before any sync: %d syncs, want 1", syncs)
	}
	if err := g.syncTicket(g.take()); err != nil {
		t.Fatal(err)
	}
	if err := g.sync(); err != nil {
		t.Fatal(err)
	}
	if syncs != 3 {
		t.Fatalf("two writes each after the last sync: %d syncs in all, want 3", syncs)
	}
}
