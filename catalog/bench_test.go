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
	// Cancellable, as md's (its server's lifetime): database/sql and the
	// MySQL driver watch such a context, which costs what md pays.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
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

// populateData puts n data files of layout replica:2 (two replica rows
// each) in one directory.
func populateData(tb testing.TB, db *catalog.DB, n int) (paths []string) {
	ctx := context.Background()
	if _, err := db.Mkdir(ctx, "/data", time.Now()); err != nil {
		tb.Fatal(err)
	}
	for i := range n {
		p := fmt.Sprintf("/data/file-%06d", i)
		id := fmt.Sprintf("%08x", i+1)
		u := &shoal.Upload{ID: id, Path: p, Servers: []string{"disk-a", "disk-b"}, Object: id + "0b1ec7",
			Layout: shoal.Layout{Kind: shoal.LayoutReplica, N: 2}, Expires: time.Now().Add(time.Hour)}
		if err := db.BeginUpload(ctx, u); err != nil {
			tb.Fatal(err)
		}
		reps := []shoal.Replica{{Server: "disk-a", Object: u.Object, Size: 1 << 20, Sum: 7}, {Server: "disk-b", Object: u.Object, Size: 1 << 20, Sum: 7}}
		if _, err := db.FinishUpload(ctx, &shoal.Commit{Upload: id, Size: 1 << 20, Sums: shoal.Sums{Adler32: 7}, MTime: time.Now(), Replicas: reps}, time.Now()); err != nil {
			tb.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// benchmarkStatData is benchmarkStat over data files with two replicas.
func benchmarkStatData(b *testing.B, db *catalog.DB) {
	paths := populateData(b, db, 1000)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			e, err := db.Stat(ctx, paths[i%len(paths)])
			if err != nil || len(e.Replicas) != 2 {
				b.Errorf("stat: %v, %d replicas", err, len(e.Replicas))
				return
			}
			i++
		}
	})
}

func BenchmarkStatDataSQLite(b *testing.B)  { benchmarkStatData(b, openSQLite(b)) }
func BenchmarkStatDataMariaDB(b *testing.B) { benchmarkStatData(b, openMariaDB(b)) }

// BenchmarkListPageSQLite reads a directory of 20,000 inline files a page
// of 512 at a time, as a streamed listing does; one op is one entry.
func BenchmarkListPageSQLite(b *testing.B) {
	db := openSQLite(b)
	dir, _ := populate(b, db, 20000)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	after, n := "", 0
	for n < b.N {
		p, err := db.ListPage(ctx, dir, after, 512, false)
		if err != nil {
			b.Fatal(err)
		}
		n += len(p.Entries)
		if !p.More {
			after = ""
			continue
		}
		after = p.Entries[len(p.Entries)-1].Name()
	}
}

// BenchmarkListSubdirsSQLite lists a directory of 200 subdirectories of 5
// files each: the path walk reads once more for each (see
// childrenByPath); one op is one entry.
func BenchmarkListSubdirsSQLite(b *testing.B) {
	db := openSQLite(b)
	ctx := context.Background()
	if _, err := db.Mkdir(ctx, "/subs", time.Now()); err != nil {
		b.Fatal(err)
	}
	for i := range 200 {
		d := fmt.Sprintf("/subs/d%03d", i)
		if _, err := db.Mkdir(ctx, d, time.Now()); err != nil {
			b.Fatal(err)
		}
		if err := db.CreateFiles(ctx, d, []string{"a", "b", "c", "d", "e"}, 1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; {
		p, err := db.ListPage(ctx, "/subs", "", 512, false)
		if err != nil || len(p.Entries) != 200 {
			b.Fatal(len(p.Entries), err)
		}
		n += len(p.Entries)
	}
}
