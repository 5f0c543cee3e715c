package cache_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"shoal"
	"shoal/cache"
	"shoal/cache/memory"
)

// Concurrent Stats and mutations through one decorator: once the writers
// are done, every cached answer agrees with the catalog (the in-process
// tiers are exact for their own writes, races with fills included).
func TestConcurrentStatsAndWrites(t *testing.T) {
	db, _ := openSQLite(t)
	c := cache.NewCatalog(db, cache.Options{L1: true, L2: memory.New(0)})
	ctx := context.Background()
	if _, err := c.Mkdir(ctx, "/d", mtime); err != nil {
		t.Fatal(err)
	}
	paths := []string{"/d/a", "/d/b", "/d/c", "/e", "/e/x"}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 300 {
				p := paths[(w+i)%len(paths)]
				switch i % 5 {
				case 0:
					c.PutInline(ctx, p, []byte(fmt.Sprint(w, i)), shoal.Sums{}, mtime, shoal.Condition{}, grace)
				case 1:
					c.Remove(ctx, p, grace)
				case 2:
					if w == 0 {
						c.Mkdir(ctx, "/e", mtime)
					} else if w == 1 {
						c.Remove(ctx, "/e", grace)
					}
				default:
					c.Stat(ctx, p)
				}
			}
		})
	}
	wg.Wait()
	for _, p := range append(paths, "/d", "/e") {
		want, wantErr := db.Stat(ctx, p)
		for range 2 { // a fill, then a hit
			got, err := c.Stat(ctx, p)
			if shoal.KindOf(err) != shoal.KindOf(wantErr) || (err == nil && (got.ID != want.ID || got.Version != want.Version)) {
				t.Errorf("Stat(%s) = %+v, %v; catalog says %+v, %v", p, got, err, want, wantErr)
			}
		}
	}
	if st := c.Stats(); st.L1.Hits == 0 || st.L2.Hits+st.L2.Misses == 0 {
		t.Errorf("tiers unused: %+v", st)
	}
}
