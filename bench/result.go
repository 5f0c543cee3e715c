package bench

import (
	"sort"
	"strconv"
	"time"
)

// Result is the outcome of one measured phase: one workload against one
// target at one size and concurrency. Every figure the table, the JSON and
// the CSV show comes from here.
type Result struct {
	Workload    string  `json:"workload"` // e.g. stat-head, stat-propfind, list, get, put, mix, files, populate
	Target      string  `json:"target"`   // base URL
	Label       string  `json:"label,omitempty"`
	Size        int64   `json:"size"` // object size in bytes (get, put, mix, files, populate)
	Concurrency int     `json:"concurrency"`
	Rate        float64 `json:"rate,omitempty"` // scheduled requests/s in open-loop mode, 0 when closed-loop
	Seconds     float64 `json:"seconds"`        // wall time of the phase

	Count     uint64            `json:"count"`  // operations completed, successful or not
	OK        uint64            `json:"ok"`     // final status 2xx
	Errors    uint64            `json:"errors"` // Count - OK
	ByClass   map[string]uint64 `json:"errors_by_class"`
	ByCode    map[string]uint64 `json:"errors_by_code"`
	Redirects uint64            `json:"redirects"` // extra requests sent to follow 3xx
	Bytes     uint64            `json:"bytes"`     // body bytes moved by successful operations

	ReqPerSec float64 `json:"req_per_sec"` // OK / Seconds: a failed request serves nothing
	MBPerSec  float64 `json:"mb_per_sec"`  // Bytes / Seconds / 1e6
	Latency   Latency `json:"latency_ms"`

	Efficiency *Efficiency `json:"efficiency,omitempty"`
}

// Latency holds percentiles in milliseconds.
type Latency struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p99.9"`
	Max  float64 `json:"max"`
}

// Requests is the number of HTTP requests the phase sent: one per operation
// plus one per redirect followed.
func (r *Result) Requests() uint64 { return r.Count + r.Redirects }

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// tally is what one worker counts; workers never share one, so the loop
// needs no lock, and tallies are merged when a phase ends.
type tally struct {
	hist      Histogram
	codes     [600]uint64 // final statuses
	netErrs   uint64      // transport errors (no status)
	redirects uint64
	bytes     uint64
}

func (t *tally) reset() { *t = tally{} }

func (t *tally) merge(o *tally) {
	t.hist.Merge(&o.hist)
	for i, c := range o.codes {
		t.codes[i] += c
	}
	t.netErrs += o.netErrs
	t.redirects += o.redirects
	t.bytes += o.bytes
}

// statusClass names the error class of a final status.
func statusClass(code int) string {
	switch {
	case code < 100 || code >= 600:
		return "other"
	default:
		return strconv.Itoa(code/100) + "xx"
	}
}

// result turns a merged tally into a Result.
func (t *tally) result(elapsed time.Duration) Result {
	r := Result{
		Seconds:   elapsed.Seconds(),
		ByClass:   map[string]uint64{},
		ByCode:    map[string]uint64{},
		Redirects: t.redirects,
		Bytes:     t.bytes,
	}
	for code, c := range t.codes {
		if c == 0 {
			continue
		}
		r.Count += c
		if code >= 200 && code < 300 {
			r.OK += c
			continue
		}
		r.Errors += c
		r.ByClass[statusClass(code)] += c
		r.ByCode[strconv.Itoa(code)] += c
	}
	if t.netErrs > 0 {
		r.Count += t.netErrs
		r.Errors += t.netErrs
		r.ByClass["net"] += t.netErrs
		r.ByCode["net"] += t.netErrs
	}
	if r.Seconds > 0 {
		r.ReqPerSec = float64(r.OK) / r.Seconds
		r.MBPerSec = float64(r.Bytes) / r.Seconds / 1e6
	}
	h := &t.hist
	r.Latency = Latency{
		Mean: ms(h.Mean()),
		P50:  ms(h.Quantile(0.50)),
		P90:  ms(h.Quantile(0.90)),
		P99:  ms(h.Quantile(0.99)),
		P999: ms(h.Quantile(0.999)),
		Max:  ms(h.Max()),
	}
	return r
}

// codesString renders errors by code as "404:3 500:1", sorted, for the
// table and the CSV.
func codesString(m map[string]uint64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := ""
	for i, k := range keys {
		if i > 0 {
			s += " "
		}
		s += k + ":" + strconv.FormatUint(m[k], 10)
	}
	return s
}
