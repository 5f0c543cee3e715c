package metrics

import (
	"context"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"

	"shoal"
	"shoal/auth"
	"shoal/cache"
	"shoal/tpc"
)

// CacheCollector writes the catalog cache's counters: lookups per tier
// and result, Stat calls that reached the SQL catalog, failed
// invalidations.
func CacheCollector(stats func() cache.Stats) Collector {
	return CollectorFunc(func(w *Writer) {
		s := stats()
		const name, help = "shoal_cache_lookups_total", "Catalog cache lookups by tier (l1 in-process, l2 memcached) and result (error includes breaker skips)."
		for _, t := range []struct {
			tier string
			s    cache.TierStats
		}{{"l1", s.L1}, {"l2", s.L2}} {
			w.Counter(name, help, float64(t.s.Hits), Label{"tier", t.tier}, Label{"result", "hit"})
			w.Counter(name, help, float64(t.s.Misses), Label{"tier", t.tier}, Label{"result", "miss"})
			w.Counter(name, help, float64(t.s.Errors), Label{"tier", t.tier}, Label{"result", "error"})
		}
		w.Counter("shoal_cache_inner_stats_total", "Stat calls the cache passed to the SQL catalog.", float64(s.Inner))
		w.Counter("shoal_cache_invalidation_errors_total", "memcached invalidations that failed (other md replicas may be stale up to the L2 TTL).", float64(s.InvalidationErrors))
	})
}

// RoundTripsCollector writes the SQL catalog's statement count.
func RoundTripsCollector(roundTrips func() uint64) Collector {
	return CollectorFunc(func(w *Writer) {
		w.Counter("shoal_catalog_round_trips_total", "SQL statements (queries, execs, transaction begins and ends) sent to the catalog database.", float64(roundTrips()))
	})
}

// CommitsCollector writes the catalog's group commit counters: committed
// batches and the write transactions they held (their ratio is the mean
// batch size).
func CommitsCollector(stats func() (batches, transactions uint64)) Collector {
	return CollectorFunc(func(w *Writer) {
		b, t := stats()
		w.Counter("shoal_catalog_commit_batches_total", "Batches of write transactions run by the catalog's group commit, each one SQL transaction and one durable commit.", float64(b))
		w.Counter("shoal_catalog_batched_transactions_total", "Write transactions run in those batches.", float64(t))
	})
}

// SpaceCollector writes a data server's free and total bytes, asking
// space at each scrape (a statfs per data directory).
func SpaceCollector(server string, space func(context.Context) (shoal.Space, error)) Collector {
	return CollectorFunc(func(w *Writer) {
		ctx, cancel := context.WithTimeout(context.Background(), CheckTimeout)
		sp, err := space(ctx)
		cancel()
		l := Label{"server", server}
		up := 1.0
		if err != nil {
			up = 0
		} else {
			w.Gauge("shoal_disk_free_bytes", "Bytes free for new objects on the data server's disks (after the reserve).", float64(sp.Free), l)
			w.Gauge("shoal_disk_total_bytes", "Bytes in all on the data server's disks.", float64(sp.Total), l)
		}
		w.Gauge("shoal_disk_space_ok", "1 when the data server could read its disks' space at this scrape, 0 otherwise.", up, l)
	})
}

// GarbageCollector writes how many garbage objects data servers removed
// and acknowledged to this md.
func GarbageCollector(dropped func() uint64) Collector {
	return CollectorFunc(func(w *Writer) {
		w.Counter("shoal_garbage_dropped_total", "Garbage objects data servers removed and acknowledged to md.", float64(dropped()))
	})
}

// BuildInfoCollector writes a constant 1 labelled with the version.
func BuildInfoCollector(version, commit string) Collector {
	return CollectorFunc(func(w *Writer) {
		w.Gauge("shoal_build_info", "Always 1; the labels say which build runs.", 1,
			Label{"version", version}, Label{"commit", commit}, Label{"goversion", runtime.Version()}, Label{"goarch", runtime.GOARCH})
	})
}

// RuntimeCollector writes the process's memory (resident set from
// /proc/self/statm, Go heap, GOMEMLIMIT), goroutines and start time: what
// an operator of a small board watches.
func RuntimeCollector() Collector {
	start := float64(time.Now().Unix())
	samples := []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/total:bytes"},
		{Name: "/gc/gomemlimit:bytes"},
	}
	return CollectorFunc(func(w *Writer) {
		s := append([]metrics.Sample(nil), samples...)
		metrics.Read(s)
		w.Gauge("go_goroutines", "Goroutines that currently exist.", float64(runtime.NumGoroutine()))
		w.Gauge("go_memstats_heap_alloc_bytes", "Bytes of live and not yet swept heap objects.", float64(s[0].Value.Uint64()))
		w.Gauge("go_memory_total_bytes", "Memory mapped by the Go runtime.", float64(s[1].Value.Uint64()))
		w.Gauge("go_gomemlimit_bytes", "The Go runtime's soft memory limit (GOMEMLIMIT).", float64(s[2].Value.Uint64()))
		if rss, ok := residentBytes(); ok {
			w.Gauge("process_resident_memory_bytes", "Resident set size of the process.", float64(rss))
		}
		w.Gauge("process_start_time_seconds", "Start time of the process since the Unix epoch.", start)
	})
}

// residentBytes reads the resident set size from /proc/self/statm (Linux).
func residentBytes() (uint64, bool) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, false
	}
	pages, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil {
		return 0, false
	}
	return pages * uint64(os.Getpagesize()), true
}

// AuthCollector writes md's authentications by method (bearer, basic,
// anonymous) and result (ok; invalid: a bad credential; denied: a valid
// principal refused a method on a path).
func AuthCollector(stats func() auth.Stats) Collector {
	return CollectorFunc(func(w *Writer) {
		s := stats()
		for m, method := range auth.StatMethods {
			for r, result := range auth.StatResults {
				w.Counter("shoal_auth_total", "Authentications by method (bearer, basic, anonymous) and result (ok, invalid credential, denied a method on a path).",
					float64(s[m][r]), Label{"method", method}, Label{"result", result})
			}
		}
	})
}

// TPCCollector writes third-party copies (pull and push) by result, the
// bytes they moved and how long they took.
func TPCCollector(stats func() tpc.Stats) Collector {
	return CollectorFunc(func(w *Writer) {
		s := stats()
		for d, dir := range tpc.StatDirections {
			for r, result := range tpc.StatResults {
				w.Counter("shoal_tpc_transfers_total", "Third-party copies by direction (pull, push) and result (success, failure, cancelled: the client hung up).",
					float64(s.Transfers[d][r]), Label{"direction", dir}, Label{"result", result})
			}
		}
		for d, dir := range tpc.StatDirections {
			w.Counter("shoal_tpc_bytes_total", "Bytes third-party copies moved, by direction, whatever their result.", float64(s.Bytes[d]), Label{"direction", dir})
		}
		for d, dir := range tpc.StatDirections {
			w.Histogram("shoal_tpc_duration_seconds", "Duration of third-party copies by direction.", tpc.DurationBuckets, s.Buckets[d], s.Seconds[d], s.Count[d], Label{"direction", dir})
		}
	})
}
