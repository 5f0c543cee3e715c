package bench

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"shoal"
)

// Options are the connection settings of a Runner.
type Options struct {
	URL         string        // base URL; workload paths are appended to its path
	Concurrency int           // connections, one goroutine each (default 1)
	Token       string        // sent as "Authorization: Bearer <token>" when set
	BasicAuth   string        // USER:PASSWORD, sent as "Authorization: Basic …" when set (and no Token)
	Timeout     time.Duration // per request (default 60s)
	Progress    io.Writer     // receives a live "\r" line while a phase runs; nil for none
	// TLS is the client config of https targets (its RootCAs verify
	// them); nil: the system roots.
	TLS *tls.Config
	// NewConn opens a new connection for every request (closed once the
	// answer is read), so a phase measures connection setup — TCP and,
	// over https, a full TLS handshake — with each request.
	NewConn bool
}

// Limits bound one phase. Count > 0 stops after exactly Count operations
// (unless Duration, if also set, ends the phase first). Rate > 0 is
// open-loop: operation g is scheduled at start + g/Rate, sent when due
// whatever the state of earlier ones, and its latency counted from the
// scheduled time, so a stalled server cannot hide its queue (coordinated
// omission). With Rate and Duration but no Count, exactly the operations
// scheduled within Duration are sent (ceil(Rate*Duration)), given up only
// if they are still not sent after another Duration (at least 5s).
type Limits struct {
	Duration time.Duration
	Count    uint64
	Rate     float64
}

// Runner holds the connections of one target for one workload, so that
// warm-up, measured phases and --vs rounds reuse them.
type Runner struct {
	opts     Options
	spec     Spec
	basePath string
	scheme   string
	host     string // host[:port] for the Host header
	addr     string // host:port to dial
	// authHeader is the whole "Authorization: Bearer …" line, or "".
	authHeader string

	workers []*worker
	paths   [][]byte // escaped request URIs read by stat, list, get and mix
	dirURI  string   // escaped request URI of spec.Dir, where put and files write
	payload []byte   // shared read-only PUT body chunk
	runID   string

	setupMu    sync.Mutex
	setupCount map[string]uint64
}

const (
	payloadChunk   = 1 << 20 // bodies up to this size are sent from memory in one piece
	maxRedirects   = 5
	objectsPerConn = 8 // put overwrites this many objects per connection
)

// NewRunner prepares connections (opened lazily) to opts.URL for spec.
func NewRunner(opts Options, spec Spec) (*Runner, error) {
	const op = "bench.NewRunner"
	u, err := url.Parse(opts.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, shoal.Errorf(op, shoal.KindInvalid, "bad --url %q: want http(s)://host[:port][/path]", opts.URL)
	}
	if opts.Concurrency < 1 {
		opts.Concurrency = 1
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 60 * time.Second
	}
	if spec.Method == "" {
		spec.Method = "HEAD"
	}
	spec.Method = strings.ToUpper(spec.Method)
	if spec.Op == OpMix && spec.GetRatio == 0 {
		spec.GetRatio = 0.9
	}
	if spec.Objects <= 0 {
		spec.Objects = 8
	}
	addr := u.Host
	if u.Port() == "" {
		if u.Scheme == "https" {
			addr = net.JoinHostPort(u.Hostname(), "443")
		} else {
			addr = net.JoinHostPort(u.Hostname(), "80")
		}
	}
	r := &Runner{
		opts:     opts,
		spec:     spec,
		basePath: strings.TrimRight(u.EscapedPath(), "/"),
		scheme:   u.Scheme,
		host:     u.Host,
		runID:    fmt.Sprintf("%x", time.Now().UnixNano()),
		addr:     addr,
	}
	switch {
	case opts.Token != "":
		r.authHeader = "Authorization: Bearer " + opts.Token + "\r\n"
	case opts.BasicAuth != "":
		r.authHeader = "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(opts.BasicAuth)) + "\r\n"
	}
	size := spec.Size
	if size > payloadChunk {
		size = payloadChunk
	}
	r.payload = make([]byte, size)
	for i := range r.payload {
		r.payload[i] = byte('a' + i%26)
	}
	r.setPaths(spec.Paths)
	for i := 0; i < opts.Concurrency; i++ {
		r.workers = append(r.workers, newWorker(r, i))
	}
	return r, nil
}

// Spec is the workload the runner performs, with defaults filled in.
func (r *Runner) Spec() Spec { return r.spec }

func (r *Runner) setPaths(paths []string) {
	r.paths = r.paths[:0]
	for _, p := range paths {
		r.paths = append(r.paths, []byte(r.basePath+escapePath(p)))
	}
}

// Close closes the connections; call it when no phase runs.
func (r *Runner) Close() {
	for _, w := range r.workers {
		w.close()
	}
}

// Phase runs the workload within lim and returns what it measured. The
// context cancels it early; what completed is still reported.
func (r *Runner) Phase(ctx context.Context, lim Limits) Result {
	t, elapsed := r.phase(ctx, lim)
	res := t.result(elapsed)
	r.label(&res, lim)
	return res
}

// phase runs the workers and returns their merged tally.
func (r *Runner) phase(ctx context.Context, lim Limits) (*tally, time.Duration) {
	sum := new(tally)
	if r.needsPaths() && len(r.paths) == 0 {
		return sum, 0
	}
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			stop.Store(true)
		case <-done:
		}
	}()
	for _, w := range r.workers {
		w.t.reset()
		w.done.Store(0)
	}
	start := time.Now()
	var wg sync.WaitGroup
	for _, w := range r.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.run(lim, start, &stop)
		}()
	}
	prog := r.progress(start, done)
	wg.Wait()
	elapsed := time.Since(start)
	close(done)
	<-prog

	for _, w := range r.workers {
		sum.merge(&w.t)
	}
	return sum, elapsed
}

func (r *Runner) needsPaths() bool {
	switch r.spec.Op {
	case OpStat, OpList, OpGet, OpMix, OpPopulate:
		return true
	}
	return false
}

func (r *Runner) label(res *Result, lim Limits) {
	res.Workload = r.spec.Name
	res.Target = r.opts.URL
	res.Size = r.spec.Size
	res.Concurrency = len(r.workers)
	res.Rate = lim.Rate
}

// progress prints a live line every half second until done is closed.
func (r *Runner) progress(start time.Time, done <-chan struct{}) <-chan struct{} {
	finished := make(chan struct{})
	if r.opts.Progress == nil {
		close(finished)
		return finished
	}
	go func() {
		defer close(finished)
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				fmt.Fprint(r.opts.Progress, "\r\033[K")
				return
			case <-tick.C:
				var n uint64
				for _, w := range r.workers {
					n += w.done.Load()
				}
				el := time.Since(start).Seconds()
				fmt.Fprintf(r.opts.Progress, "\r\033[K  %s %s  %5.1fs  %10d ops  %10.0f ops/s",
					r.spec.Name, r.host, el, n, float64(n)/el)
			}
		}
	}()
	return finished
}
