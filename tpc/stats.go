package tpc

import (
	"sync/atomic"
	"time"
)

// Labels of the transfer counters (metrics.TPCCollector writes them).
var (
	StatDirections = [...]string{"pull", "push"}
	StatResults    = [...]string{"success", "failure", "cancelled"}
	// DurationBuckets are the upper bounds, in seconds, of the duration
	// histogram: a small file to a long one.
	DurationBuckets = []float64{0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 14400}
)

const (
	statSuccess = iota
	statFailure
	statCancelled
)

// Stats are a client's counters since it started.
type Stats struct {
	// Transfers by direction (StatDirections) and result (StatResults).
	Transfers [2][3]uint64
	// Bytes moved by direction, whatever the result.
	Bytes [2]uint64
	// Duration by direction: cumulative counts per DurationBuckets bound,
	// the total and the sum in seconds.
	Buckets [2][]uint64
	Count   [2]uint64
	Seconds [2]float64
}

type stats struct {
	transfers [2][3]atomic.Uint64
	bytes     [2]atomic.Uint64
	buckets   [2][]atomic.Uint64 // per bucket, the last one +Inf
	nanos     [2]atomic.Uint64
}

func (s *stats) record(dir Mode, result int, bytes int64, d time.Duration) {
	i := 0
	if dir == ModePush {
		i = 1
	}
	s.transfers[i][result].Add(1)
	if bytes > 0 {
		s.bytes[i].Add(uint64(bytes))
	}
	b := 0
	for b < len(DurationBuckets) && d.Seconds() > DurationBuckets[b] {
		b++
	}
	s.buckets[i][b].Add(1)
	s.nanos[i].Add(uint64(max(d, 0)))
}

// Stats is a snapshot of the counters.
func (c *Client) Stats() Stats {
	var out Stats
	s := &c.stats
	for i := range 2 {
		for r := range 3 {
			out.Transfers[i][r] = s.transfers[i][r].Load()
		}
		out.Bytes[i] = s.bytes[i].Load()
		out.Buckets[i] = make([]uint64, len(DurationBuckets))
		var n uint64
		for b := range DurationBuckets {
			n += s.buckets[i][b].Load()
			out.Buckets[i][b] = n
		}
		out.Count[i] = n + s.buckets[i][len(DurationBuckets)].Load()
		out.Seconds[i] = float64(s.nanos[i].Load()) / 1e9
	}
	return out
}

func (s *stats) init() {
	for i := range 2 {
		s.buckets[i] = make([]atomic.Uint64, len(DurationBuckets)+1)
	}
}
