package catalog_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"shoal"
	"shoal/catalog"
)

// Runners racing for jobs make batches whose members lose (the job was
// taken), roll the batch back and run again: every run of a claim must
// report the job it claimed and only that (a claim's state kept from a
// lost run once made a runner claim a second job and lose the first).
// Many rounds, as a round races only now and then.
func TestMariaDBClaimRaces(t *testing.T) { testClaimRaces(t, openMariaDB(t)) }

func TestSQLiteClaimRaces(t *testing.T) { testClaimRaces(t, openSQLite(t)) }

func testClaimRaces(t *testing.T, db *catalog.DB) {
	const rounds, jobs, runners = 80, 6, 4
	ctx := context.Background()
	now := time.Now()
	for round := range rounds {
		var ids []int64
		for range jobs {
			j, err := db.CreateJob(ctx, &shoal.Job{Kind: "scrub"})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, j.ID)
		}
		var mu sync.Mutex
		reported := map[int64]string{}
		var wg sync.WaitGroup
		for r := range runners {
			owner := fmt.Sprintf("round%d-r%d", round, r)
			wg.Go(func() {
				for range jobs + 1 {
					j, err := db.ClaimJob(ctx, owner, now, time.Hour)
					if shoal.IsKind(err, shoal.KindNotFound) {
						return
					}
					if err != nil {
						t.Errorf("%s: %v", owner, err)
						return
					}
					mu.Lock()
					if prev, ok := reported[j.ID]; ok {
						t.Errorf("job %d reported to %s and %s", j.ID, prev, owner)
					}
					reported[j.ID] = owner
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		for _, id := range ids {
			j, err := db.Job(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if j.State != shoal.JobRunning || reported[id] != j.Owner {
				t.Errorf("round %d: job %d %s, owner %q, reported to %q; want running, reported to its owner", round, id, j.State, j.Owner, reported[id])
			}
		}
	}
}
