package bench

import (
	"math"
	"testing"
	"time"
)

func near(got, want time.Duration, rel float64) bool {
	return math.Abs(float64(got-want)) <= rel*float64(want)
}

// TestHistogramUniform: 1..100000 µs, each once: the p-th percentile is
// p% of 100 ms, within 1 %; max and min exact.
func TestHistogramUniform(t *testing.T) {
	var h Histogram
	for i := 1; i <= 100000; i++ {
		h.Record(time.Duration(i) * time.Microsecond)
	}
	for _, tc := range []struct {
		q    float64
		want time.Duration
	}{
		{0.5, 50 * time.Millisecond},
		{0.9, 90 * time.Millisecond},
		{0.99, 99 * time.Millisecond},
		{0.999, 99900 * time.Microsecond},
		{0.0001, 10 * time.Microsecond},
	} {
		if got := h.Quantile(tc.q); !near(got, tc.want, 0.01) {
			t.Errorf("q%g = %v, want %v ±1%%", tc.q, got, tc.want)
		}
	}
	if h.Max() != 100*time.Millisecond || h.Min() != time.Microsecond || h.Count() != 100000 {
		t.Errorf("max %v min %v count %d", h.Max(), h.Min(), h.Count())
	}
	if got, want := h.Mean(), 50000500*time.Nanosecond; !near(got, want, 1e-9) {
		t.Errorf("mean %v, want %v", got, want)
	}
}

// TestHistogramSkewed: 990 fast values and 10 slow ones: p99 is still
// fast, p99.9 and max the slow one; small values are exact.
func TestHistogramSkewed(t *testing.T) {
	var h Histogram
	for i := 0; i < 990; i++ {
		h.Record(100 * time.Nanosecond)
	}
	for i := 0; i < 10; i++ {
		h.Record(3 * time.Second)
	}
	if got := h.Quantile(0.99); got != 100*time.Nanosecond {
		t.Errorf("p99 %v, want 100ns exactly", got)
	}
	if got := h.Quantile(0.999); !near(got, 3*time.Second, 0.005) {
		t.Errorf("p99.9 %v, want 3s", got)
	}
	if h.Quantile(1) != 3*time.Second {
		t.Errorf("max %v", h.Quantile(1))
	}
}

// TestHistogramMerge: merging the halves gives the histogram of the whole.
func TestHistogramMerge(t *testing.T) {
	var a, b, all Histogram
	for i := 1; i <= 5000; i++ {
		d := time.Duration(i*i) * time.Nanosecond
		all.Record(d)
		if i%2 == 0 {
			a.Record(d)
		} else {
			b.Record(d)
		}
	}
	a.Merge(&b)
	if a != all {
		t.Fatalf("merged histogram differs from the whole")
	}
	var empty Histogram
	if empty.Quantile(0.5) != 0 || empty.Max() != 0 {
		t.Errorf("empty histogram")
	}
}

// TestBucketsBounded: every value lies in its bucket, and no bucket is
// wider than 1/128 of its lower bound.
func TestBucketsBounded(t *testing.T) {
	for _, v := range []int64{0, 1, 127, 128, 129, 255, 256, 1000, 123456789, 1 << 40, 1<<47 - 1} {
		i := bucketOf(v)
		lo, hi := bucketRange(i)
		if v < lo || v >= hi {
			t.Errorf("%d in bucket %d [%d,%d)", v, i, lo, hi)
		}
		if lo >= subCount && float64(hi-lo)/float64(lo) > 1.0/128+1e-12 {
			t.Errorf("bucket %d [%d,%d) too wide", i, lo, hi)
		}
	}
}
