package metrics_test

import (
	"bufio"
	"context"
	"errors"
	"net"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"shoal/auth"
	"shoal/cache"
	"shoal/metrics"
	"shoal/wire"
)

func scrape(t *testing.T, reg *metrics.Registry) string {
	t.Helper()
	var b strings.Builder
	if _, err := reg.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// sampleLine is a sample of the text format 0.0.4: name, optional labels
// with escaped values, a value.
var sampleLine = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\[\\"n])*",?)*\})? (\+Inf|-Inf|NaN|[-+0-9.eE]+)$`)

// checkFormat fails unless every line is a comment or a sample, and each
// metric name has exactly one HELP and one TYPE line, before its samples.
func checkFormat(t *testing.T, text string) {
	t.Helper()
	typed := map[string]string{}
	helped := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "# HELP "):
			name := strings.Fields(line)[2]
			if helped[name] {
				t.Errorf("second HELP for %s", name)
			}
			helped[name] = true
		case strings.HasPrefix(line, "# TYPE "):
			f := strings.Fields(line)
			if _, dup := typed[f[2]]; dup {
				t.Errorf("second TYPE for %s", f[2])
			}
			typed[f[2]] = f[3]
		default:
			if !sampleLine.MatchString(line) {
				t.Errorf("not a sample line: %q", line)
				continue
			}
			name := line[:strings.IndexAny(line, "{ ")]
			base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_sum"), "_count")
			if typed[name] == "" && typed[base] != metrics.TypeHistogram {
				t.Errorf("sample %s before its TYPE line", name)
			}
		}
	}
}

func TestRegistryGroupsFamiliesAndEscapes(t *testing.T) {
	reg := metrics.NewRegistry()
	reg.Register(metrics.CollectorFunc(func(w *metrics.Writer) {
		w.Counter("b_total", "B.", 1, metrics.L("x", "1")...)
		w.Gauge("a", "A with \\ and\nnewline.", 2.5)
	}), metrics.CollectorFunc(func(w *metrics.Writer) {
		w.Counter("b_total", "B.", 3, metrics.L("x", `q"uo\te`+"\n")...)
	}))
	got := scrape(t, reg)
	want := `# HELP a A with \\ and\nnewline.
# TYPE a gauge
a 2.5
# HELP b_total B.
# TYPE b_total counter
b_total{x="1"} 1
b_total{x="q\"uo\\te\n"} 3
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	checkFormat(t, got)
}

func TestHistogramBucketsAreCumulative(t *testing.T) {
	h := metrics.NewHistogram([]float64{0.001, 0.01})
	for _, d := range []time.Duration{500 * time.Microsecond, time.Millisecond, 5 * time.Millisecond, time.Second} {
		h.Observe(d)
	}
	reg := metrics.NewRegistry()
	reg.Register(metrics.CollectorFunc(func(w *metrics.Writer) { h.Write(w, "lat_seconds", "L.", metrics.L("m", "GET")...) }))
	got := scrape(t, reg)
	for _, want := range []string{
		`lat_seconds_bucket{m="GET",le="0.001"} 2`, // 500µs and exactly 1ms (le is inclusive)
		`lat_seconds_bucket{m="GET",le="0.01"} 3`,
		`lat_seconds_bucket{m="GET",le="+Inf"} 4`,
		`lat_seconds_sum{m="GET"} 1.0065`,
		`lat_seconds_count{m="GET"} 4`,
		"# TYPE lat_seconds histogram",
	} {
		if !strings.Contains(got, want+"\n") {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	checkFormat(t, got)
}

// serve runs h on a loopback listener until the test ends.
func serve(t *testing.T, h fasthttp.RequestHandler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &fasthttp.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Shutdown() })
	return "http://" + ln.Addr().String()
}

func do(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(method)
	req.SetRequestURI(url)
	if body != "" {
		req.SetBodyString(body)
	}
	c := &fasthttp.Client{}
	if err := c.DoTimeout(req, resp, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode(), string(resp.Body())
}

func TestMiddlewareCountsAndServesEndpoints(t *testing.T) {
	reg := metrics.NewRegistry()
	var calls atomic.Int64
	next := func(ctx *fasthttp.RequestCtx) {
		calls.Add(1)
		switch string(ctx.Path()) {
		case "/missing":
			ctx.SetStatusCode(fasthttp.StatusNotFound)
		case "/.shoal/metrics": // a POST: md's internal API, not ours
			ctx.SetStatusCode(fasthttp.StatusForbidden)
		default:
			ctx.SetBodyString("hello") // 5 bytes out
		}
	}
	var healthy atomic.Bool
	healthy.Store(true)
	reg.AddCheck("catalog", func(ctx context.Context) error {
		if !healthy.Load() {
			return errors.New("database is down")
		}
		return nil
	})
	url := serve(t, metrics.Middleware(next, reg, "md"))

	do(t, "GET", url+"/a", "")
	do(t, "GET", url+"/a", "")
	do(t, "HEAD", url+"/a", "")
	do(t, "GET", url+"/missing", "")
	do(t, "PUT", url+"/b", "0123456789")
	do(t, "PROPFIND", url+"/", "")
	if code, _ := do(t, "POST", url+wire.PathMetrics, "x"); code != fasthttp.StatusForbidden {
		t.Errorf("POST %s: got %d, want the next handler's 403", wire.PathMetrics, code)
	}
	if n := calls.Load(); n != 7 {
		t.Errorf("next handler called %d times, want 7", n)
	}

	code, body := do(t, "GET", url+wire.PathHealthz, "")
	if code != 200 || body != "ok\n" {
		t.Errorf("healthz: got %d %q, want 200 ok", code, body)
	}
	healthy.Store(false)
	code, body = do(t, "GET", url+wire.PathHealthz, "")
	if code != fasthttp.StatusServiceUnavailable || !strings.Contains(body, "catalog: database is down") {
		t.Errorf("healthz: got %d %q, want 503 naming the failed check", code, body)
	}

	code, text := do(t, "GET", url+wire.PathMetrics, "")
	if code != 200 {
		t.Fatalf("metrics: got %d", code)
	}
	checkFormat(t, text)
	for _, want := range []string{
		`shoal_http_requests_total{component="md",method="GET",code="200"} 2`,
		`shoal_http_requests_total{component="md",method="GET",code="404"} 1`,
		`shoal_http_requests_total{component="md",method="HEAD",code="200"} 1`,
		`shoal_http_requests_total{component="md",method="PUT",code="200"} 1`,
		`shoal_http_requests_total{component="md",method="PROPFIND",code="200"} 1`,
		`shoal_http_requests_total{component="md",method="POST",code="403"} 1`,
		`shoal_http_request_duration_seconds_count{component="md",method="GET"} 3`,
		`shoal_http_request_bytes_total{component="md"} 11`,  // PUT 10 + POST 1
		`shoal_http_response_bytes_total{component="md"} 20`, // 4 bodies of "hello", HEAD not counted
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("missing %q in\n%s", want, text)
		}
	}
	if strings.Contains(text, "healthz") || strings.Contains(text, `method="GET",code="503"`) {
		t.Errorf("requests for the metrics endpoints themselves were counted:\n%s", text)
	}
}

func TestCollectors(t *testing.T) {
	reg := metrics.NewRegistry()
	reg.Register(
		metrics.CacheCollector(func() cache.Stats {
			return cache.Stats{L1: cache.TierStats{Hits: 7, Misses: 2}, L2: cache.TierStats{Errors: 1}, Inner: 3}
		}),
		metrics.RoundTripsCollector(func() uint64 { return 42 }),
		metrics.GarbageCollector(func() uint64 { return 5 }),
		metrics.RuntimeCollector(),
		metrics.BuildInfoCollector("v1", "abc"),
		metrics.AuthCollector(func() auth.Stats { return auth.Stats{{4, 0, 1}, {9, 2, 3}, {5, 1, 0}} }),
	)
	text := scrape(t, reg)
	checkFormat(t, text)
	for _, want := range []string{
		`shoal_cache_lookups_total{tier="l1",result="hit"} 7`,
		`shoal_cache_lookups_total{tier="l1",result="miss"} 2`,
		`shoal_cache_lookups_total{tier="l2",result="error"} 1`,
		`shoal_cache_inner_stats_total 3`,
		`shoal_catalog_round_trips_total 42`,
		`shoal_garbage_dropped_total 5`,
		`process_resident_memory_bytes `,
		`shoal_build_info{version="v1",commit="abc",`,
		`shoal_auth_total{method="anonymous",result="ok"} 4`,
		`shoal_auth_total{method="bearer",result="denied"} 3`,
		`shoal_auth_total{method="basic",result="invalid"} 1`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in\n%s", want, text)
		}
	}
}

// The middleware must not add allocations to md's stat path.
func TestMiddlewareAllocatesNothing(t *testing.T) {
	reg := metrics.NewRegistry()
	h := metrics.Middleware(func(ctx *fasthttp.RequestCtx) { ctx.SetStatusCode(200) }, reg, "md")
	var ctx fasthttp.RequestCtx
	ctx.Request.Header.SetMethod("HEAD")
	ctx.Request.SetRequestURI("/some/file")
	h(&ctx) // warm up
	if n := testing.AllocsPerRun(1000, func() { h(&ctx) }); n != 0 {
		t.Errorf("middleware allocates %v times per request, want 0", n)
	}
}

func BenchmarkMiddlewareHEAD(b *testing.B) {
	reg := metrics.NewRegistry()
	h := metrics.Middleware(func(ctx *fasthttp.RequestCtx) { ctx.SetStatusCode(200) }, reg, "md")
	var ctx fasthttp.RequestCtx
	ctx.Request.Header.SetMethod("HEAD")
	ctx.Request.SetRequestURI("/some/file")
	b.ReportAllocs()
	for b.Loop() {
		h(&ctx)
	}
}
