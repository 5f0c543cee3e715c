package metrics

import (
	"bufio"
	"context"
	"errors"
	"io"
	"sort"
	"sync"
	"time"
)

// Metric types of the text format.
const (
	TypeCounter   = "counter"
	TypeGauge     = "gauge"
	TypeHistogram = "histogram"
)

// Collector writes its samples when the registry is scraped.
type Collector interface {
	Collect(w *Writer)
}

// CollectorFunc adapts a function to Collector.
type CollectorFunc func(w *Writer)

// Collect calls f.
func (f CollectorFunc) Collect(w *Writer) { f(w) }

// Check is a health check: nil when healthy, an error saying why not.
type Check func(ctx context.Context) error

// CheckTimeout bounds every health check of one /.shoal/healthz request.
const CheckTimeout = 2 * time.Second

// Registry holds the collectors and health checks of one process. It is
// safe for concurrent use; registering is for start-up, scraping for any
// time.
type Registry struct {
	mu         sync.Mutex
	collectors []Collector
	checks     []namedCheck
}

type namedCheck struct {
	name string
	fn   Check
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{} }

// Register adds collectors; their samples are written in registration
// order, grouped by metric name.
func (r *Registry) Register(cs ...Collector) {
	r.mu.Lock()
	r.collectors = append(r.collectors, cs...)
	r.mu.Unlock()
}

// AddCheck adds a health check under name (e.g. "catalog", "disk").
func (r *Registry) AddCheck(name string, fn Check) {
	r.mu.Lock()
	r.checks = append(r.checks, namedCheck{name, fn})
	r.mu.Unlock()
}

// Health runs every check, each within CheckTimeout, and joins the
// failures as "name: reason".
func (r *Registry) Health(ctx context.Context) error {
	r.mu.Lock()
	checks := append([]namedCheck(nil), r.checks...)
	r.mu.Unlock()
	var errs []error
	for _, c := range checks {
		cctx, cancel := context.WithTimeout(ctx, CheckTimeout)
		err := c.fn(cctx)
		cancel()
		if err != nil {
			errs = append(errs, &checkError{c.name, err})
		}
	}
	return errors.Join(errs...)
}

type checkError struct {
	name string
	err  error
}

func (e *checkError) Error() string { return e.name + ": " + e.err.Error() }
func (e *checkError) Unwrap() error { return e.err }

// WriteTo writes every collector's samples in the text format. Samples of
// one metric name are kept together under one HELP and TYPE line, as the
// format requires; names are written in sorted order.
func (r *Registry) WriteTo(out io.Writer) (int64, error) {
	r.mu.Lock()
	cs := append([]Collector(nil), r.collectors...)
	r.mu.Unlock()
	w := &Writer{families: map[string]*family{}}
	for _, c := range cs {
		c.Collect(w)
	}
	names := make([]string, 0, len(w.families))
	for n := range w.families {
		names = append(names, n)
	}
	sort.Strings(names)
	cw := &countWriter{w: out}
	bw := bufio.NewWriter(cw)
	for _, n := range names {
		f := w.families[n]
		bw.WriteString("# HELP " + n + " " + escapeHelp(f.help) + "\n")
		bw.WriteString("# TYPE " + n + " " + f.typ + "\n")
		bw.Write(f.samples)
	}
	err := bw.Flush()
	return cw.n, err
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
