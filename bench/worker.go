package bench

import (
	"bytes"
	"io"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// worker owns one keep-alive connection (a HostClient limited to one
// connection), its preallocated requests and its tally. Its loop allocates
// nothing per request for bodies up to payloadChunk.
type worker struct {
	r  *Runner
	id int
	hc *fasthttp.HostClient

	read, write *fasthttp.Request // the workload's read request (HEAD, GET, PROPFIND) and PUT
	hop         *fasthttp.Request // redirect hop, re-filled from the request it follows
	resp        *fasthttp.Response

	t    tally
	done atomic.Uint64 // operations so far, for the progress line

	uri  []byte       // scratch for generated paths and Locations
	body repeatReader // bodies larger than payloadChunk
	sink []byte       // drains streamed responses
}

func newWorker(r *Runner, id int, addr string) *worker {
	w := &worker{
		r:  r,
		id: id,
		hc: &fasthttp.HostClient{
			Addr:                      addr,
			IsTLS:                     r.scheme == "https",
			Name:                      "shoal-bench",
			MaxConns:                  1,
			MaxIdemponentCallAttempts: 1, // a retry would be a request we did not count
			ReadTimeout:               r.opts.Timeout,
			WriteTimeout:              r.opts.Timeout,
			MaxResponseBodySize:       payloadChunk,
			DisablePathNormalizing:    true,
		},
		read:  new(fasthttp.Request),
		write: new(fasthttp.Request),
		hop:   new(fasthttp.Request),
		resp:  new(fasthttp.Response),
		uri:   make([]byte, 0, 256),
		sink:  make([]byte, 64<<10),
	}
	w.body.chunk = r.payload
	method, depth := "GET", ""
	switch r.spec.Op {
	case OpStat:
		method = r.spec.Method
		if method == "PROPFIND" {
			depth = "0"
		}
	case OpList:
		method, depth = "PROPFIND", "1"
	}
	w.prepare(w.read, method, depth)
	w.prepare(w.write, "PUT", "")
	return w
}

func (w *worker) prepare(req *fasthttp.Request, method, depth string) {
	req.Header.SetMethod(method)
	req.Header.SetHost(w.r.host)
	if depth != "" {
		req.Header.Set("Depth", depth)
	}
	if w.r.opts.Token != "" {
		req.Header.Set("Authorization", "Bearer "+w.r.opts.Token)
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
				if lim.Count > 0 || !hardStop.IsZero() {
					return
				}
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
	var req *fasthttp.Request
	size := int64(-1) // -1: no body
	switch spec.Op {
	case OpStat, OpList, OpGet:
		req = w.read
		req.SetRequestURIBytes(r.paths[g%uint64(len(r.paths))])
	case OpMix:
		req = w.read
		if mixIsPut(g, spec.GetRatio) {
			req, size = w.write, spec.Size
		}
		req.SetRequestURIBytes(r.paths[g%uint64(len(r.paths))])
	case OpPopulate:
		req, size = w.write, spec.Size
		req.SetRequestURIBytes(r.paths[g%uint64(len(r.paths))])
	case OpPut, OpCreate:
		req, size = w.write, spec.Size
		n := g / uint64(len(r.workers)) // this worker's sequence number
		if spec.Op == OpPut {
			n %= objectsPerConn
		}
		w.uri = append(w.uri[:0], r.dirURI...)
		w.uri = append(w.uri, "/w"...)
		w.uri = strconv.AppendInt(w.uri, int64(w.id), 10)
		w.uri = append(w.uri, '-')
		w.uri = strconv.AppendUint(w.uri, n, 10)
		req.SetRequestURIBytes(w.uri)
	}
	status, n, err := w.exchange(req, size)
	if err != nil {
		w.t.netErrs++
		return
	}
	if status < 0 || status >= len(w.t.codes) {
		status = 0
	}
	w.t.codes[status]++
	if status >= 200 && status < 300 {
		w.t.bytes += uint64(n)
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

// exchange sends req (with a body of size bytes when size >= 0), follows
// redirects re-sending the body, and returns the final status and the body
// bytes moved (sent for a PUT, received otherwise).
func (w *worker) exchange(req *fasthttp.Request, size int64) (status int, moved int64, err error) {
	resp := w.resp
	resp.StreamBody = size < 0 && w.r.streamReads
	if size >= 0 {
		w.setBody(req, size)
	}
	err = w.hc.Do(req, resp)
	for hops := 0; err == nil && isRedirect(resp.StatusCode()) && hops < maxRedirects; hops++ {
		loc := resp.Header.Peek(fasthttp.HeaderLocation)
		if len(loc) == 0 {
			break
		}
		w.absolute(req, loc)
		if _, err = w.drain(resp); err != nil {
			return 0, 0, err
		}
		w.t.redirects++
		hop := w.hop
		if hop != req {
			req.Header.CopyTo(&hop.Header)
		}
		oldHost := string(req.Host()) // rare path: redirects only
		hop.SetRequestURIBytes(w.uri)
		if !bytes.Equal(hop.URI().Host(), []byte(oldHost)) {
			// The Location carries its own credential (signed URL); do not
			// hand the bearer token to another host.
			hop.Header.Del(fasthttp.HeaderAuthorization)
		}
		if size >= 0 {
			w.setBody(hop, size)
		}
		resp.StreamBody = size < 0 && w.r.streamReads
		err = w.r.redirect.Do(hop, resp)
		req = hop
	}
	if err != nil {
		return 0, 0, err
	}
	status = resp.StatusCode()
	n, err := w.drain(resp)
	if err != nil {
		return 0, 0, err
	}
	if size >= 0 {
		n = size
	}
	return status, n, nil
}

func isRedirect(code int) bool {
	return code == 301 || code == 302 || code == 303 || code == 307 || code == 308
}

// absolute resolves loc against req's URL into w.uri.
func (w *worker) absolute(req *fasthttp.Request, loc []byte) {
	if bytes.HasPrefix(loc, []byte("http://")) || bytes.HasPrefix(loc, []byte("https://")) {
		w.uri = append(w.uri[:0], loc...)
		return
	}
	u := req.URI()
	if bytes.HasPrefix(loc, []byte("/")) {
		w.uri = append(w.uri[:0], u.Scheme()...)
		w.uri = append(w.uri, "://"...)
		w.uri = append(w.uri, u.Host()...)
		w.uri = append(w.uri, loc...)
		return
	}
	var tmp fasthttp.URI
	u.CopyTo(&tmp)
	tmp.UpdateBytes(loc)
	w.uri = append(w.uri[:0], tmp.FullURI()...)
}

// drain reads a streamed body to its end and counts it; for a buffered
// body it returns its length.
func (w *worker) drain(resp *fasthttp.Response) (int64, error) {
	if !resp.StreamBody || resp.BodyStream() == nil {
		return int64(len(resp.Body())), nil
	}
	var n int64
	s := resp.BodyStream()
	for {
		k, err := s.Read(w.sink)
		n += int64(k)
		if err == io.EOF {
			break
		}
		if err != nil {
			resp.CloseBodyStream()
			return n, err
		}
	}
	return n, resp.CloseBodyStream()
}

func (w *worker) setBody(req *fasthttp.Request, size int64) {
	if size <= int64(len(w.r.payload)) {
		req.SetBodyRaw(w.r.payload[:size])
		return
	}
	w.body.n = size
	w.body.off = 0
	req.SetBodyStream(&w.body, int(size))
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
