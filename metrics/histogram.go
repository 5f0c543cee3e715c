package metrics

import (
	"sync/atomic"
	"time"
)

// LatencyBuckets are the upper bounds, in seconds, of request latency
// histograms: from a cached stat (tens of µs) to a large transfer.
var LatencyBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// Histogram counts durations into fixed buckets with atomic adds: two per
// observation, no allocation, no lock.
type Histogram struct {
	bounds []time.Duration
	counts []atomic.Uint64 // per bucket, not cumulative; last is +Inf
	sumNs  atomic.Uint64
}

// NewHistogram returns a histogram over bounds in seconds, ascending.
func NewHistogram(bounds []float64) *Histogram {
	h := &Histogram{bounds: make([]time.Duration, len(bounds)), counts: make([]atomic.Uint64, len(bounds)+1)}
	for i, b := range bounds {
		h.bounds[i] = time.Duration(b * float64(time.Second))
	}
	return h
}

// Observe counts one duration.
func (h *Histogram) Observe(d time.Duration) {
	i := 0
	for i < len(h.bounds) && d > h.bounds[i] {
		i++
	}
	h.counts[i].Add(1)
	if d > 0 {
		h.sumNs.Add(uint64(d))
	}
}

// Write writes the histogram as metric name.
func (h *Histogram) Write(w *Writer, name, help string, labels ...Label) {
	bounds := make([]float64, len(h.bounds))
	cum := make([]uint64, len(h.bounds))
	var n uint64
	for i := range h.bounds {
		n += h.counts[i].Load()
		cum[i] = n
		bounds[i] = h.bounds[i].Seconds()
	}
	n += h.counts[len(h.bounds)].Load()
	w.Histogram(name, help, bounds, cum, float64(h.sumNs.Load())/1e9, n, labels...)
}
