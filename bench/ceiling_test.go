package bench

import (
	"context"
	"net"
	"testing"
)

func startCeiling(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewCeilingServer(128)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Shutdown() })
	return "http://" + ln.Addr().String()
}

// TestCeilingAnswers: the ceiling answers each workload with its constant
// success status.
func TestCeilingAnswers(t *testing.T) {
	url := startCeiling(t)
	ctx := context.Background()
	for _, tc := range []struct {
		spec  Spec
		code  string
		bytes uint64
	}{
		{Spec{Name: "head", Op: OpStat, Paths: []string{"/a"}}, "", 0},
		{Spec{Name: "propfind", Op: OpStat, Method: "PROPFIND", Paths: []string{"/a"}}, "", 100 * uint64(len(ceilingPropfind))},
		{Spec{Name: "get", Op: OpGet, Paths: []string{"/a"}}, "", 100 * 128},
		{Spec{Name: "put", Op: OpPut, Size: 5000}, "", 100 * 5000},
		{Spec{Name: "big put", Op: OpPut, Size: 3 << 20}, "", 100 * 3 << 20},
	} {
		r := newRunner(t, Options{URL: url, Concurrency: 4}, tc.spec)
		res := r.Phase(ctx, Limits{Count: 100})
		if res.Count != 100 || res.OK != 100 || res.Bytes != tc.bytes {
			t.Errorf("%s: count %d ok %d bytes %d (want %d), errors %v", tc.spec.Name, res.Count, res.OK, res.Bytes, tc.bytes, res.ByCode)
		}
	}
}

// TestNoAllocations: the request loop allocates nothing per operation
// for stat, get and small puts (a few allocations on the first requests
// are fasthttp's buffers being sized). AllocsPerRun counts the whole
// process, the ceiling server included: for every request but GET and
// HEAD, fasthttp's server (StreamRequestBody) allocates one io.LimitReader
// to discard the request body, even an empty one (seen in a memory
// profile: requestStream.discard), so that one allocation is not ours.
func TestNoAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	url := startCeiling(t)
	for _, tc := range []struct {
		spec   Spec
		server float64 // allocations by the server per request
	}{
		{Spec{Name: "head", Op: OpStat, Paths: []string{"/a", "/b"}}, 0},
		{Spec{Name: "propfind", Op: OpStat, Method: "PROPFIND", Paths: []string{"/a"}}, 1},
		{Spec{Name: "get", Op: OpGet, Size: 128, Paths: []string{"/a"}}, 0},
		{Spec{Name: "put", Op: OpPut, Size: 4096}, 1},
		{Spec{Name: "files", Op: OpCreate, Size: 0}, 1},
	} {
		spec := tc.spec
		r := newRunner(t, Options{URL: url, Concurrency: 1}, spec)
		w := r.workers[0]
		var g uint64
		for ; g < 100; g++ {
			w.do(g)
		}
		allocs := testing.AllocsPerRun(2000, func() { w.do(g); g++ })
		if allocs > tc.server+0.01 {
			t.Errorf("%s: %.3f allocations per operation, want %g (the server's)", spec.Name, allocs, tc.server)
		}
		if w.t.codes[200]+w.t.codes[201]+w.t.codes[207] != g || w.t.netErrs != 0 {
			t.Errorf("%s: %d operations, statuses %v", spec.Name, g, w.t.codes[200:210])
		}
	}
}
