package metrics

import (
	"context"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/internal/httperr"
	"shoal/wire"
)

// ContentType is the media type of the text exposition format 0.0.4.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// methods are the request methods counted by name; others count as OTHER.
var methods = [...]string{"GET", "HEAD", "PUT", "POST", "DELETE", "OPTIONS", "PROPFIND", "PROPPATCH", "MKCOL", "MOVE", "COPY", "LOCK", "UNLOCK", "OTHER"}

const otherMethod = len(methods) - 1

// Status codes 100–599 are counted exactly; anything else as code 0.
const (
	minCode = 100
	maxCode = 599
)

// requestStats are one component's counters, preallocated so that a
// request costs only atomic adds.
type requestStats struct {
	component string
	codes     [len(methods)][maxCode - minCode + 2]atomic.Uint64 // index 0: outside 100–599
	latency   [len(methods)]*Histogram
	bytesIn   atomic.Uint64
	bytesOut  atomic.Uint64
}

func newRequestStats(component string) *requestStats {
	s := &requestStats{component: component}
	for i := range s.latency {
		s.latency[i] = NewHistogram(LatencyBuckets)
	}
	return s
}

func methodIndex(m []byte) int {
	switch string(m) {
	case "GET":
		return 0
	case "HEAD":
		return 1
	case "PUT":
		return 2
	case "POST":
		return 3
	case "DELETE":
		return 4
	case "OPTIONS":
		return 5
	case "PROPFIND":
		return 6
	case "PROPPATCH":
		return 7
	case "MKCOL":
		return 8
	case "MOVE":
		return 9
	case "COPY":
		return 10
	case "LOCK":
		return 11
	case "UNLOCK":
		return 12
	}
	return otherMethod
}

func codeIndex(code int) int {
	if code < minCode || code > maxCode {
		return 0
	}
	return code - minCode + 1
}

// record counts one answered request.
func (s *requestStats) record(ctx *fasthttp.RequestCtx) {
	m := methodIndex(ctx.Method())
	s.codes[m][codeIndex(ctx.Response.StatusCode())].Add(1)
	s.latency[m].Observe(time.Since(ctx.Time()))
	if n := ctx.Request.Header.ContentLength(); n > 0 {
		s.bytesIn.Add(uint64(n))
	}
	if m != 1 { // a HEAD answer declares a length but sends no body
		n := ctx.Response.Header.ContentLength() // a stream's declared length (-1: unknown)
		if !ctx.Response.IsBodyStream() {
			n = len(ctx.Response.Body())
		}
		if n > 0 {
			s.bytesOut.Add(uint64(n))
		}
	}
}

// Collect writes the component's request metrics.
func (s *requestStats) Collect(w *Writer) {
	comp := Label{"component", s.component}
	for m := range methods {
		for c := range s.codes[m] {
			n := s.codes[m][c].Load()
			if n == 0 {
				continue
			}
			code := "other"
			if c > 0 {
				code = strconv.Itoa(c - 1 + minCode)
			}
			w.Counter("shoal_http_requests_total", "HTTP requests answered, by method and status code.",
				float64(n), comp, Label{"method", methods[m]}, Label{"code", code})
		}
	}
	for m, h := range s.latency {
		if h.count() == 0 {
			continue
		}
		h.Write(w, "shoal_http_request_duration_seconds", "Time from reading a request's headers to the handler's return, by method.",
			comp, Label{"method", methods[m]})
	}
	w.Counter("shoal_http_request_bytes_total", "Request body bytes received, as declared by Content-Length (chunked bodies are not counted).", float64(s.bytesIn.Load()), comp)
	w.Counter("shoal_http_response_bytes_total", "Response body bytes sent (HEAD and streams of unknown length are not counted).", float64(s.bytesOut.Load()), comp)
}

func (h *Histogram) count() uint64 {
	var n uint64
	for i := range h.counts {
		n += h.counts[i].Load()
	}
	return n
}

// Middleware counts every request next answers under component (requests
// by method and status, latency, bytes in and out) in reg, and answers GET
// and HEAD of wire.PathMetrics (reg's samples) and wire.PathHealthz (200 "ok" when
// every check of reg passes, 503 with the failures otherwise) itself.
// Requests for the two paths are not counted.
func Middleware(next fasthttp.RequestHandler, reg *Registry, component string) fasthttp.RequestHandler {
	stats := newRequestStats(component)
	reg.Register(stats)
	return func(ctx *fasthttp.RequestCtx) {
		if p := ctx.Path(); len(p) > len("/.shoal/") && p[1] == '.' && (ctx.IsGet() || ctx.IsHead()) {
			switch string(p) {
			case wire.PathMetrics:
				serveMetrics(ctx, reg)
				return
			case wire.PathHealthz:
				serveHealthz(ctx, reg)
				return
			}
		}
		next(ctx)
		stats.record(ctx)
	}
}

func serveMetrics(ctx *fasthttp.RequestCtx, reg *Registry) {
	ctx.SetContentType(ContentType)
	ctx.Response.Header.Set("Cache-Control", "no-store")
	if _, err := reg.WriteTo(ctx); err != nil {
		ctx.Error("metrics: "+err.Error(), fasthttp.StatusInternalServerError)
	}
}

func serveHealthz(ctx *fasthttp.RequestCtx, reg *Registry) {
	ctx.SetContentType("text/plain; charset=utf-8")
	ctx.Response.Header.Set("Cache-Control", "no-store")
	if err := reg.Health(context.Background()); err != nil {
		httperr.SetKind(ctx, shoal.KindUnavailable) // 503, Retry-After
		ctx.SetBodyString(err.Error() + "\n")
		return
	}
	ctx.SetBodyString("ok\n")
}
