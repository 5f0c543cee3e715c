package placement

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"shoal"
	"shoal/catalog"
)

// newView is a View over a real SQLite catalog.
func newView(t *testing.T) (*View, *catalog.DB) {
	t.Helper()
	db, err := catalog.Open(context.Background(), catalog.Options{DSN: "sqlite:" + filepath.Join(t.TempDir(), "catalog.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return New(db, 10*time.Second, nil), db
}

// TestChoices: writes go to distinct live active servers with room, on
// distinct hosts while there are enough; a suspect server gets none; too
// few servers is KindUnavailable when some are down (they may come
// back), KindInsufficient when the pool lacks them; reads list a suspect
// replica last.
func TestChoices(t *testing.T) {
	ctx := context.Background()
	v, _ := newView(t)
	beat := func(id, url string, free int64) {
		t.Helper()
		if err := v.Heartbeat(ctx, &shoal.Server{ID: id, URL: url, Pool: shoal.DefaultPool, Free: free, Total: 1 << 30}, func() error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	beat("a", "http://h1:1", 1<<20)
	beat("b", "http://h1:2", 1<<20)
	beat("c", "http://h2:1", 1<<20)
	beat("full", "http://h3:1", 0)
	pool := shoal.Pool{Name: shoal.DefaultPool, Layout: shoal.Layout{Kind: shoal.LayoutReplica, N: 2}}
	for range 20 {
		got, err := v.ForLayout(ctx, pool, false, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || hostOf(got[0].URL) == hostOf(got[1].URL) {
			t.Fatalf("replica:2 on %s and %s: want two hosts", got[0].URL, got[1].URL)
		}
	}
	if _, err := v.ForLayout(ctx, pool, false, 2<<20); !shoal.IsKind(err, shoal.KindInsufficient) {
		t.Errorf("no server with the room: %v, want KindInsufficient", err)
	}
	v.MarkSuspect("c")
	for range 20 {
		got, err := v.ForLayout(ctx, pool, false, 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, sv := range got {
			if sv.ID == "c" {
				t.Fatal("a suspect server was chosen for a write")
			}
		}
	}
	three := shoal.Pool{Name: shoal.DefaultPool, Layout: shoal.Layout{Kind: shoal.LayoutReplica, N: 3}}
	if _, err := v.ForLayout(ctx, three, false, 100); !shoal.IsKind(err, shoal.KindUnavailable) {
		t.Errorf("replica:3 with one of three servers suspect: %v, want KindUnavailable", err)
	}
	e := &shoal.Entry{Path: "/f", Layout: pool.Layout, Replicas: []shoal.Replica{{Server: "c", Object: "o1"}, {Server: "a", Object: "o2"}}}
	for range 10 {
		reps, err := v.LiveReplicas(ctx, e)
		if err != nil {
			t.Fatal(err)
		}
		if len(reps) != 2 || reps[0].Server != "a" || reps[1].Server != "c" {
			t.Fatalf("replicas %+v: want a, then the suspect c", reps)
		}
	}
	beat("c", "http://h2:9", 1<<20) // a heartbeat (here with a new URL) clears the mark
	if got, _ := v.ForLayout(ctx, three, false, 100); len(got) != 3 {
		t.Errorf("replica:3 once c heartbeated: %d servers", len(got))
	}
}

// TestReadsNameANewServer: an md replica whose server list was read just
// before a data server's registration (taken by another md) places a
// write on that server and serves a file on it at once, not after its
// next Refresh; a replica on a server the catalog does not list at all
// is refused, and asking again at once reads the catalog no more, but a
// server that registers meanwhile is still found at once.
func TestReadsNameANewServer(t *testing.T) {
	ctx := context.Background()
	v, db := newView(t)
	other := New(db, 10*time.Second, nil) // the md that takes the heartbeats
	reads := &countingRegistry{ServerRegistry: db}
	reader := New(reads, 10*time.Second, nil)
	for _, view := range []*View{v, reader} {
		if _, _, err := view.List(ctx); err != nil {
			t.Fatal(err)
		}
	}
	register := func(id string) {
		t.Helper()
		if err := other.Heartbeat(ctx, &shoal.Server{ID: id, URL: "http://" + id + ":1", Pool: shoal.DefaultPool, Free: 1 << 20, Total: 1 << 30}, func() error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	register("new")
	pool := shoal.Pool{Name: shoal.DefaultPool, Layout: shoal.Layout{Kind: shoal.LayoutReplica, N: 1}}
	if got, err := v.ForLayout(ctx, pool, false, 100); err != nil || len(got) != 1 || got[0].ID != "new" {
		t.Fatalf("a write once the only server registered through another md: %v, %v", got, err)
	}
	e := &shoal.Entry{Path: "/f", Layout: shoal.Layout{Kind: shoal.LayoutReplica, N: 1}, Replicas: []shoal.Replica{{Server: "new", Object: "o1"}}}
	reps, err := reader.LiveReplicas(ctx, e)
	if err != nil || len(reps) != 1 || reps[0].URL != "http://new:1" {
		t.Fatalf("file on a server registered after md's list was read: %+v, %v", reps, err)
	}
	gone := &shoal.Entry{Path: "/g", Layout: e.Layout, Replicas: []shoal.Replica{{Server: "gone", Object: "o2"}}}
	before := reads.n.Load()
	for range 5 {
		if _, err := reader.LiveReplicas(ctx, gone); !shoal.IsKind(err, shoal.KindUnavailable) {
			t.Errorf("file on a server the catalog does not list: %v, want KindUnavailable", err)
		}
	}
	if n := reads.n.Load() - before; n != 1 {
		t.Errorf("five reads of a file on a server the catalog does not list read the list %d times, want 1", n)
	}
	register("newer")
	e.Replicas[0].Server = "newer"
	if reps, err := reader.LiveReplicas(ctx, e); err != nil || len(reps) != 1 {
		t.Fatalf("file on a server registered right after a read that found another missing: %+v, %v", reps, err)
	}
}

// countingRegistry counts the reads of the server list.
type countingRegistry struct {
	shoal.ServerRegistry
	n atomic.Int64
}

func (c *countingRegistry) Servers(ctx context.Context) ([]shoal.Server, error) {
	c.n.Add(1)
	return c.ServerRegistry.Servers(ctx)
}
