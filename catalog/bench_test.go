package catalog_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"shoal"
	"shoal/catalog"
)

// populate makes /bench/d0/…/d7 and puts n files in the deepest directory.
func populate(tb testing.TB, db *catalog.DB, n int) (dir string, names []string) {
	ctx := context.Background()
	dir = "/bench"
	if _, err := db.Mkdir(ctx, dir, time.Now()); err != nil {
		tb.Fatal(err)
	}
	for i := range 7 {
		dir += fmt.Sprintf("/d%d", i)
		if _, err := db.Mkdir(ctx, dir, time.Now()); err != nil {
			tb.Fatal(err)
		}
	}
	for i := range n {
		names = append(names, fmt.Sprintf("file-%06d", i))
	}
	if err := db.CreateFiles(ctx, dir, names, 100); err != nil {
		tb.Fatal(err)
	}
	return dir, names
}

func benchmarkStat(b *testing.B, db *catalog.DB) {
	dir, names := populate(b, db, 1000)
	ctx := context.Background()
	start := db.RoundTrips()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if _, err := db.Stat(ctx, dir+"/"+names[i%len(names)]); err != nil {
				b.Error(err)
				return
			}
			i++
		}
	})
	b.ReportMetric(float64(db.RoundTrips()-start)/float64(b.N), "trips/op")
}

func BenchmarkStatSQLite(b *testing.B)  { benchmarkStat(b, openSQLite(b)) }
func BenchmarkStatMariaDB(b *testing.B) { benchmarkStat(b, openMariaDB(b)) }

// CreateFiles fills a directory with inline files in batches; the
// files/s figure is logged (not asserted: tests assert behaviour).
func TestCreateFiles(t *testing.T) {
	for name, open := range map[string]func(testing.TB) *catalog.DB{"sqlite": openSQLite, "mariadb": openMariaDB} {
		t.Run(name, func(t *testing.T) {
			db := open(t)
			ctx := context.Background()
			const n = 12000
			start := time.Now()
			dir, names := populate(t, db, n)
			t.Logf("%s: CreateFiles of %d files: %.0f files/s", name, n, n/time.Since(start).Seconds())
			es, err := db.List(ctx, dir)
			if err != nil || len(es) != n {
				t.Fatalf("List = %d entries, %v; want %d", len(es), err, n)
			}
			e, err := db.Stat(ctx, dir+"/"+names[n-1])
			if err != nil || e.Size != 100 || len(e.Inline) != 100 || e.Sums.Adler32 == 0 || len(e.Sums.MD5) != 16 {
				t.Fatalf("Stat of a bulk file = %+v, %v", e, err)
			}
			if bytes, files, err := db.Usage(ctx, "/bench"); err != nil || bytes != 100*n || files != n {
				t.Errorf("Usage = %d, %d, %v", bytes, files, err)
			}
			err = db.CreateFiles(ctx, dir, []string{"new", names[5]}, 0)
			if !shoal.IsKind(err, shoal.KindExist) {
				t.Errorf("CreateFiles of an existing name = %v, want KindExist", err)
			}
			if _, err := db.Stat(ctx, dir+"/new"); !shoal.IsKind(err, shoal.KindNotFound) {
				t.Errorf("failed batch left /new behind: %v", err)
			}
			if err := db.CreateFiles(ctx, "/nope", []string{"x"}, 0); !shoal.IsKind(err, shoal.KindNotFound) {
				t.Errorf("CreateFiles into a missing dir = %v", err)
			}
			if err := db.CreateFiles(ctx, dir, []string{"a/b"}, 0); !shoal.IsKind(err, shoal.KindInvalid) {
				t.Errorf("CreateFiles with a slash = %v", err)
			}
		})
	}
}
