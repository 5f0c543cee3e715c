package bench

import (
	"math"
	"math/bits"
	"time"
)

// Histogram records latencies in log-linear buckets, the way HDR histograms
// do: values below 2^subBits nanoseconds are exact, larger values fall in one
// of 2^subBits linear sub-buckets per power of two, so a bucket is never
// wider than 1/128 of its lower bound (0.8 %) and a percentile reported at the
// bucket's middle is within 0.4 % of the true value. The bucket array is
// fixed, so recording never allocates and histograms of several workers
// merge by adding counts.
type Histogram struct {
	counts [numBuckets]uint64
	n      uint64
	sum    float64 // nanoseconds, for the mean
	min    int64
	max    int64 // exact
}

const (
	subBits    = 7
	subCount   = 1 << subBits
	maxExp     = 40 // values up to 2^47 ns (about 39 hours)
	numBuckets = (maxExp + 1) * subCount
)

// bucketOf maps a non-negative value to its bucket index.
func bucketOf(v int64) int {
	if v < subCount {
		if v < 0 {
			return 0
		}
		return int(v)
	}
	shift := bits.Len64(uint64(v)) - subBits - 1 // v>>shift lies in [subCount, 2*subCount)
	idx := (shift+1)*subCount + int(v>>shift) - subCount
	if idx >= numBuckets {
		return numBuckets - 1
	}
	return idx
}

// bucketRange returns the inclusive lower and exclusive upper bound of bucket i.
func bucketRange(i int) (lo, hi int64) {
	if i < subCount {
		return int64(i), int64(i) + 1
	}
	shift := i/subCount - 1
	sub := int64(i%subCount + subCount)
	return sub << shift, (sub + 1) << shift
}

// Record adds one latency.
func (h *Histogram) Record(d time.Duration) {
	v := int64(d)
	if v < 0 {
		v = 0
	}
	h.counts[bucketOf(v)]++
	if h.n == 0 || v < h.min {
		h.min = v
	}
	if v > h.max {
		h.max = v
	}
	h.n++
	h.sum += float64(v)
}

// Merge adds the counts of o to h.
func (h *Histogram) Merge(o *Histogram) {
	if o.n == 0 {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	if o.max > h.max {
		h.max = o.max
	}
	h.n += o.n
	h.sum += o.sum
}

// Count is the number of recorded values.
func (h *Histogram) Count() uint64 { return h.n }

// Max is the largest recorded value, exact.
func (h *Histogram) Max() time.Duration { return time.Duration(h.max) }

// Min is the smallest recorded value, exact.
func (h *Histogram) Min() time.Duration { return time.Duration(h.min) }

// Mean is the arithmetic mean, exact.
func (h *Histogram) Mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return time.Duration(h.sum / float64(h.n))
}

// Quantile returns the smallest recorded value v such that at least a
// fraction q of the values are <= v (to bucket precision), clamped to the
// exact min and max. q=1 is the exact max.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	if q >= 1 {
		return time.Duration(h.max)
	}
	rank := uint64(math.Ceil(q * float64(h.n)))
	if rank < 1 {
		rank = 1
	}
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			lo, hi := bucketRange(i)
			v := lo + (hi-lo-1)/2
			if v < h.min {
				v = h.min
			}
			if v > h.max {
				v = h.max
			}
			return time.Duration(v)
		}
	}
	return time.Duration(h.max)
}
