package bench

import (
	"bytes"
	"io"
	"net"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"
)

// worker owns one keep-alive connection to the target (plus one per
// other host redirects lead to), its request buffer and its tally. Its loop
// allocates nothing per request.
type worker struct {
	r    *Runner
	id   int
	main *conn
	hops map[string]*conn // connections to redirect targets on other hosts, by host:port

	t    tally
	done atomic.Uint64 // operations so far, for the progress line

	head []byte       // the request head being sent
	uri  []byte       // scratch for generated paths
	loc  []byte       // Location of the last response
	hop  []byte       // request URI of a redirect hop
	body repeatReader // bodies larger than payloadChunk

	created uint64 // files this worker named for OpCreate, over all phases
}

func newWorker(r *Runner, id int) *worker {
	w := &worker{
		r:    r,
		id:   id,
		main: newConn(r.addr, r.scheme == "https", r.opts.TLS, r.opts.Timeout),
		head: make([]byte, 0, 1024),
		uri:  make([]byte, 0, 256),
		loc:  make([]byte, 0, 512),
		hop:  make([]byte, 0, 512),
	}
	w.body.chunk = r.payload
	return w
}

func (w *worker) close() {
	w.main.close()
	for _, c := range w.hops {
		c.close()
	}
}

// run performs operations g = id, id+C, id+2C, … until the limits say stop.
func (w *worker) run(lim Limits, start time.Time, stop *atomic.Bool) {
	c := uint64(len(w.r.workers))
	var deadline, hardStop time.Time
	if lim.Duration > 0 {
		deadline = start.Add(lim.Duration)
		grace := lim.Duration
		if grace < 5*time.Second {
			grace = 5 * time.Second
		}
		hardStop = deadline.Add(grace)
	}
	for g := uint64(w.id); !stop.Load(); g += c {
		if lim.Count > 0 && g >= lim.Count {
			return
		}
		var sched time.Time
		if lim.Rate > 0 {
			sched = start.Add(time.Duration(float64(g) / lim.Rate * 1e9))
			if lim.Duration > 0 && !sched.Before(deadline) {
				return
			}
			now := time.Now()
			if !hardStop.IsZero() && now.After(hardStop) {
				return
			}
			if d := sched.Sub(now); d > 0 {
				time.Sleep(d)
			}
		} else {
			sched = time.Now()
			if lim.Duration > 0 && !sched.Before(deadline) {
				return
			}
		}
		w.do(g)
		w.t.hist.Record(time.Since(sched))
		w.done.Add(1)
	}
}

// do performs operation g and counts its outcome.
func (w *worker) do(g uint64) {
	r := w.r
	spec := &r.spec
	method, depth := "GET", ""
	size := int64(-1) // -1: no body
	var uri []byte
	switch spec.Op {
	case OpStat:
		method = spec.Method
		if method == "PROPFIND" {
			depth = "0"
			if spec.Body != nil {
				size = int64(len(spec.Body))
			}
		}
		uri = r.paths[g%uint64(len(r.paths))]
	case OpList:
		method, depth = "PROPFIND", "1"
		if spec.Body != nil {
			size = int64(len(spec.Body))
		}
		uri = r.paths[g%uint64(len(r.paths))]
	case OpGet:
		uri = r.paths[g%uint64(len(r.paths))]
	case OpMix:
		if mixIsPut(g, spec.GetRatio) {
			method, size = "PUT", spec.Size
		}
		uri = r.paths[g%uint64(len(r.paths))]
	case OpPopulate:
		method, size = "PUT", spec.Size
		uri = r.paths[g%uint64(len(r.paths))]
	case OpPut, OpCreate:
		method, size = "PUT", spec.Size
		// put cycles over this worker's objectsPerConn objects; files
		// names a new one every time, counting across phases (each
		// phase starts g over, and the names must not).
		n := w.created
		if spec.Op == OpPut {
			n = g / uint64(len(r.workers)) % objectsPerConn
		} else {
			w.created++
		}
		w.uri = append(w.uri[:0], r.dirURI...)
		w.uri = append(w.uri, "/w"...)
		w.uri = strconv.AppendInt(w.uri, int64(w.id), 10)
		w.uri = append(w.uri, '-')
		w.uri = strconv.AppendUint(w.uri, n, 10)
		uri = w.uri
	}
	w.count(w.exchange(method, uri, depth, size))
	if r.opts.NewConn {
		w.close()
	}
}

func (w *worker) count(status int, moved int64, err error) {
	if err != nil {
		w.t.netErrs++
		return
	}
	if status < 0 || status >= len(w.t.codes) {
		status = 0
	}
	w.t.codes[status]++
	if status >= 200 && status < 300 {
		w.t.bytes += uint64(moved)
	}
}

// mixIsPut spreads PUTs evenly and deterministically over the sequence:
// operation g is a PUT when the golden-ratio hash of g falls above the
// GET ratio.
func mixIsPut(g uint64, getRatio float64) bool {
	const golden = 0x9E3779B97F4A7C15
	frac := float64((g*golden)>>11) / float64(1<<53)
	return frac >= getRatio
}

// exchange sends one request (with a body of size bytes when size >= 0),
// follows redirects re-sending the body, and returns the final status
// and the body bytes moved (sent for a PUT, received otherwise).
func (w *worker) exchange(method string, uri []byte, depth string, size int64) (status int, moved int64, err error) {
	c, host := w.main, w.r.host
	auth := true
	for hops := 0; ; hops++ {
		w.buildHead(method, uri, host, depth, size, auth)
		var body []byte
		var stream io.Reader
		if size >= 0 && method == "PROPFIND" {
			body = w.r.spec.Body
		} else if size >= 0 {
			if size <= int64(len(w.r.payload)) {
				body = w.r.payload[:size]
			} else {
				w.body.n, w.body.off = size, 0
				stream = &w.body
			}
		}
		w.loc = w.loc[:0]
		status, moved, err = c.roundTrip(w.head, body, stream, size, method == "HEAD", &w.loc)
		if err != nil {
			return 0, 0, err
		}
		if !isRedirect(status) || len(w.loc) == 0 || hops == maxRedirects {
			break
		}
		w.t.redirects++
		var sameHost bool
		if c, uri, sameHost, err = w.follow(c, uri); err != nil {
			return 0, 0, err
		}
		if !sameHost {
			// The Location carries its own credential (a signed URL); do
			// not hand the bearer token to another host.
			auth = false
			host = c.addr
		}
	}
	if size >= 0 && method != "PROPFIND" {
		moved = size
	}
	return status, moved, nil
}

// follow resolves w.loc against the request it answered (connection and
// URI) and returns the connection and request URI of the next hop.
func (w *worker) follow(from *conn, uri []byte) (*conn, []byte, bool, error) {
	loc := w.loc
	switch {
	case bytes.HasPrefix(loc, []byte("/")):
		w.hop = append(w.hop[:0], loc...)
		return from, w.hop, true, nil
	case bytes.HasPrefix(loc, []byte("http://")), bytes.HasPrefix(loc, []byte("https://")):
		tls := loc[4] == 's'
		rest := loc[bytes.IndexByte(loc, ':')+3:]
		hostport, path := rest, []byte("/")
		if i := bytes.IndexAny(rest, "/?"); i >= 0 {
			hostport, path = rest[:i], rest[i:]
		}
		w.hop = append(w.hop[:0], path...)
		if w.hop[0] == '?' {
			w.hop = append([]byte("/"), w.hop...)
		}
		if string(hostport) == w.r.host && tls == (w.r.scheme == "https") { // no allocation: compiler-optimised comparison
			return w.main, w.hop, true, nil
		}
		if c, ok := w.hops[string(hostport)]; ok {
			return c, w.hop, false, nil
		}
		addr := string(hostport)
		if _, _, err := net.SplitHostPort(addr); err != nil {
			port := "80"
			if tls {
				port = "443"
			}
			addr = net.JoinHostPort(addr, port)
		}
		if w.hops == nil {
			w.hops = map[string]*conn{}
		}
		c := newConn(addr, tls, w.r.opts.TLS, w.r.opts.Timeout)
		w.hops[string(hostport)] = c
		return c, w.hop, false, nil
	default: // a relative reference: rare, so net/url may allocate
		base, err := url.Parse(string(uri))
		if err != nil {
			return nil, nil, false, err
		}
		ref, err := url.Parse(string(loc))
		if err != nil {
			return nil, nil, false, err
		}
		w.hop = append(w.hop[:0], base.ResolveReference(ref).RequestURI()...)
		return from, w.hop, true, nil
	}
}

func isRedirect(code int) bool {
	return code == 301 || code == 302 || code == 303 || code == 307 || code == 308
}

// buildHead writes the request head into w.head.
func (w *worker) buildHead(method string, uri []byte, host, depth string, size int64, auth bool) {
	h := append(w.head[:0], method...)
	h = append(h, ' ')
	h = append(h, uri...)
	h = append(h, " HTTP/1.1\r\nHost: "...)
	h = append(h, host...)
	h = append(h, "\r\nUser-Agent: shoal-bench\r\n"...)
	if depth != "" {
		h = append(h, "Depth: "...)
		h = append(h, depth...)
		h = append(h, "\r\n"...)
	}
	if auth && w.r.authHeader != "" {
		h = append(h, w.r.authHeader...)
	}
	if size >= 0 {
		h = append(h, "Content-Length: "...)
		h = strconv.AppendInt(h, size, 10)
		h = append(h, "\r\n"...)
	} else if method != "GET" && method != "HEAD" {
		h = append(h, "Content-Length: 0\r\n"...)
	}
	w.head = append(h, "\r\n"...)
}

// repeatReader yields n bytes by repeating chunk, so a 128 MiB PUT needs
// only the 1 MiB chunk in memory.
type repeatReader struct {
	chunk  []byte
	n, off int64
}

func (b *repeatReader) Read(p []byte) (int, error) {
	if b.off >= b.n {
		return 0, io.EOF
	}
	left := b.n - b.off
	c := b.chunk[b.off%int64(len(b.chunk)):]
	if int64(len(c)) > left {
		c = c[:left]
	}
	k := copy(p, c)
	b.off += int64(k)
	return k, nil
}
