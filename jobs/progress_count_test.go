package jobs_test

import (
	"context"
	"testing"

	"shoal"
	"shoal/jobs"
)

// gated is a data server's store whose Open waits until the test lets it.
type gated struct {
	shoal.BlobStore
	opened  chan struct{}
	release chan struct{}
}

func (s gated) Open(ctx context.Context, id string) (shoal.Object, error) {
	select {
	case s.opened <- struct{}{}:
	default:
	}
	<-s.release
	return s.BlobStore.Open(ctx, id)
}

// TestScrubCountsFilesRead: a scrub counts a file done once its copies
// are read, not when it begins reading it: while the first file's read
// waits, none is done (a scrub of 8 large files showed 8/8, 100 %, with
// 16 MiB still to read, and its time left from that).
func TestScrubCountsFilesRead(t *testing.T) {
	c := scrubSystem(t)
	env := c.Env()
	store := env.Store
	g := gated{opened: make(chan struct{}, scrubFiles), release: make(chan struct{})}
	env.Store = func(sv shoal.Server) shoal.BlobStore { g := g; g.BlobStore = store(sv); return g }
	tr := jobs.NewTracker("scrub")
	done := make(chan error, 1)
	go func() {
		_, err := jobs.Scrub(context.Background(), env, 0, tr)
		done <- err
	}()
	<-g.opened
	if p := tr.Snapshot(); p.Unit != "files" || p.Total != scrubFiles || p.Done != 0 {
		t.Errorf("while the first file is read: %d/%d %s, want 0/%d files", p.Done, p.Total, p.Unit, scrubFiles)
	}
	close(g.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if p := tr.Snapshot(); p.Done != scrubFiles {
		t.Errorf("after the scrub: %d/%d files done", p.Done, p.Total)
	}
}
