package bench

import (
	"context"
	"fmt"
	"testing"
	"time"
)

func newRunner(t *testing.T, opts Options, spec Spec) *Runner {
	t.Helper()
	r, err := NewRunner(opts, spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	if err := r.Setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestCountsHonest: what the runner reports equals what the server
// answered, per method and per status, errors included.
func TestCountsHonest(t *testing.T) {
	s := startDAV(t)
	ctx := context.Background()
	l := Layout{Prefix: "/tree", Files: 50, Dirs: 5}
	pop, err := Populate(ctx, Options{URL: s.url, Concurrency: 4}, l, 100)
	if err != nil {
		t.Fatal(err)
	}
	if pop.Count != 50 || pop.OK != 50 || pop.Bytes != 5000 {
		t.Fatalf("populate: count %d ok %d bytes %d, want 50 50 5000", pop.Count, pop.OK, pop.Bytes)
	}
	if b, ok := s.file(l.FilePath(49)); !ok || len(b) != 100 {
		t.Fatalf("file 49 on server: %v, %d bytes", ok, len(b))
	}
	m, _ := s.counts()
	if m["PUT"] != 50 || m["MKCOL"] != 6 {
		t.Fatalf("server saw %v, want 50 PUT and 6 MKCOL", m)
	}

	// 50 good paths, 3 answered 404 by path, 2 answered 500 by path.
	paths := l.FilePaths()
	paths = append(paths, "/err404/a", "/err404/b", "/err404/c", "/err500/a", "/err500/b")
	for _, method := range []string{"HEAD", "PROPFIND"} {
		t.Run(method, func(t *testing.T) {
			r := newRunner(t, Options{URL: s.url, Concurrency: 7}, Spec{Name: "stat", Op: OpStat, Method: method, Paths: paths})
			s.reset()
			res := r.Phase(ctx, Limits{Count: 10 * 55})
			m, st := s.counts()
			okStatus := 200
			if method == "PROPFIND" {
				okStatus = 207
			}
			if res.Count != 550 || uint64(m[method]) != res.Requests() || len(m) != 1 {
				t.Fatalf("runner count %d (requests %d), server saw %v", res.Count, res.Requests(), m)
			}
			if res.OK != 500 || uint64(st[okStatus]) != res.OK {
				t.Errorf("ok: runner %d, server %d, want 500", res.OK, st[okStatus])
			}
			if res.Errors != 50 || res.ByCode["404"] != 30 || res.ByCode["500"] != 20 ||
				res.ByClass["4xx"] != 30 || res.ByClass["5xx"] != 20 || uint64(st[404]) != 30 || uint64(st[500]) != 20 {
				t.Errorf("errors %d by code %v by class %v; server %v", res.Errors, res.ByCode, res.ByClass, st)
			}
			if res.Latency.P50 <= 0 || res.Latency.Max < res.Latency.P99 || res.Latency.P99 < res.Latency.P50 {
				t.Errorf("latency %+v", res.Latency)
			}
		})
	}

	t.Run("duration", func(t *testing.T) {
		r := newRunner(t, Options{URL: s.url, Concurrency: 3}, Spec{Name: "stat", Op: OpStat, Paths: paths})
		s.reset()
		res := r.Phase(ctx, Limits{Duration: 300 * time.Millisecond})
		m, _ := s.counts()
		if res.Count == 0 || uint64(m["HEAD"]) != res.Count {
			t.Fatalf("runner %d, server %v", res.Count, m)
		}
	})

	t.Run("list", func(t *testing.T) {
		r := newRunner(t, Options{URL: s.url, Concurrency: 2}, Spec{Name: "list", Op: OpList, Paths: l.DirPaths()})
		s.reset()
		res := r.Phase(ctx, Limits{Count: 20})
		m, st := s.counts()
		if res.Count != 20 || res.OK != 20 || m["PROPFIND"] != 20 || st[207] != 20 {
			t.Fatalf("runner %+v, server %v %v", res, m, st)
		}
		if res.Bytes == 0 {
			t.Errorf("no listing bytes counted")
		}
	})
}

// TestWrites: put, files and mix send what they say and the bodies arrive whole.
func TestWrites(t *testing.T) {
	s := startDAV(t)
	ctx := context.Background()

	put := newRunner(t, Options{URL: s.url, Concurrency: 3}, Spec{Name: "put", Op: OpPut, Size: 3000})
	s.reset()
	res := put.Phase(ctx, Limits{Count: 30})
	m, _ := s.counts()
	if res.OK != 30 || m["PUT"] != 30 || res.Bytes != 90000 {
		t.Fatalf("put: %+v, server %v", res, m)
	}
	if b, ok := s.file("/bench/put-3000/w2-0"); !ok || len(b) != 3000 {
		t.Fatalf("put object: %v %d", ok, len(b))
	}

	files := newRunner(t, Options{URL: s.url, Concurrency: 2}, Spec{Name: "files", Op: OpCreate, Size: 0})
	res = files.Phase(ctx, Limits{Count: 11})
	dir := files.Spec().Dir
	if res.OK != 11 {
		t.Fatalf("files: %+v", res)
	}
	// A second phase (after a warm-up, or another round) creates new
	// files too, rather than overwriting the first phase's.
	if res = files.Phase(ctx, Limits{Count: 11}); res.OK != 11 {
		t.Fatalf("files, second phase: %+v", res)
	}
	for w, n := range []int{12, 10} { // each phase: worker 0 did 6, worker 1 did 5
		for i := 0; i < n; i++ {
			p := fmt.Sprintf("%s/w%d-%d", dir, w, i)
			if _, ok := s.file(p); !ok {
				t.Errorf("created file %s missing", p)
			}
		}
	}

	// Large bodies go through the streaming path (over payloadChunk).
	big := newRunner(t, Options{URL: s.url, Concurrency: 2}, Spec{Name: "get", Op: OpGet, Size: 3<<20 + 5, Objects: 2})
	if b, ok := s.file("/bench/get-3145733/o1"); !ok || len(b) != 3<<20+5 {
		t.Fatalf("setup object: %v %d", ok, len(b))
	}
	s.reset()
	res = big.Phase(ctx, Limits{Count: 6})
	if res.OK != 6 || res.Bytes != 6*(3<<20+5) {
		t.Fatalf("big get: %+v", res)
	}

	// Given paths of unknown size (Size 0) are streamed too, whatever their size.
	unknown := newRunner(t, Options{URL: s.url, Concurrency: 2}, Spec{Name: "get", Op: OpGet, Paths: big.Spec().Paths})
	res = unknown.Phase(ctx, Limits{Count: 4})
	if res.OK != 4 || res.Bytes != 4*(3<<20+5) {
		t.Fatalf("get of unknown size: %+v", res)
	}

	mix := newRunner(t, Options{URL: s.url, Concurrency: 4}, Spec{Name: "mix", Op: OpMix, Size: 100, GetRatio: 0.75})
	s.reset()
	res = mix.Phase(ctx, Limits{Count: 1000})
	m, _ = s.counts()
	if res.OK != 1000 || m["GET"]+m["PUT"] != 1000 {
		t.Fatalf("mix: %+v, server %v", res, m)
	}
	puts := 0
	for g := uint64(0); g < 1000; g++ {
		if mixIsPut(g, 0.75) {
			puts++
		}
	}
	if m["PUT"] != puts || puts < 200 || puts > 300 {
		t.Errorf("mix: server saw %d PUT, schedule says %d (want about 250)", m["PUT"], puts)
	}
}

// TestRedirects: 302 on GET and 307 on PUT are followed to another host,
// the PUT body is re-sent whole, the bearer token is not handed over, and
// every hop is counted.
func TestRedirects(t *testing.T) {
	md, data := startDAV(t), startDAV(t)
	md.redirectTo = data.url
	ctx := context.Background()
	opts := Options{URL: md.url, Concurrency: 2, Token: "secret"}

	put := newRunner(t, opts, Spec{Name: "put", Op: OpPut, Size: 2 << 20, Dir: "/r/up"})
	// Setup made /r on md and /r/up, redirected (307), on data.
	if b := put.SetupRequests(); b["MKCOL"] != 2 || b["redirects"] != 1 {
		t.Fatalf("setup requests %v", b)
	}
	md.reset()
	data.reset()
	res := put.Phase(ctx, Limits{Count: 10})
	mm, ms := md.counts()
	dm, ds := data.counts()
	if res.Count != 10 || res.OK != 10 || res.Redirects != 10 || mm["PUT"] != 10 || ms[307] != 10 || dm["PUT"] != 10 || ds[201] != 10 {
		t.Fatalf("put: %+v; md %v %v; data %v %v", res, mm, ms, dm, ds)
	}
	if b, ok := data.file("/up/w1-4"); !ok || len(b) != 2<<20 {
		t.Fatalf("redirected PUT body: %v, %d bytes", ok, len(b))
	}
	if md.auth["Bearer secret"] != 10 || len(data.auth) != 0 {
		t.Errorf("Authorization seen by md %v, by data %v", md.auth, data.auth)
	}

	// data has /up/w*-*, written through the redirect; read them via /r/.
	get := newRunner(t, opts, Spec{Name: "get", Op: OpGet, Size: 2 << 20, Paths: []string{"/r/up/w0-0", "/r/up/w1-0", "/r/missing"}})
	md.reset()
	data.reset()
	res = get.Phase(ctx, Limits{Count: 9})
	mm, ms = md.counts()
	dm, ds = data.counts()
	if res.Count != 9 || res.OK != 6 || res.ByCode["404"] != 3 || res.Redirects != 9 ||
		mm["GET"] != 9 || ms[302] != 9 || dm["GET"] != 9 || ds[404] != 3 || res.Bytes != 6*(2<<20) {
		t.Fatalf("get: %+v; md %v %v; data %v %v", res, mm, ms, dm, ds)
	}
}

// TestOpenLoop: a rate schedules exactly rate × duration operations (or
// exactly Count), whatever the speed of the machine.
func TestOpenLoop(t *testing.T) {
	s := startDAV(t)
	ctx := context.Background()
	r := newRunner(t, Options{URL: s.url, Concurrency: 4}, Spec{Name: "stat", Op: OpStat, Paths: []string{"/"}})
	s.reset()
	res := r.Phase(ctx, Limits{Duration: time.Second, Rate: 300})
	m, _ := s.counts()
	if res.Count != 300 || m["HEAD"] != 300 {
		t.Fatalf("rate 300/s for 1s: runner %d, server %v", res.Count, m)
	}
	s.reset()
	res = r.Phase(ctx, Limits{Count: 77, Rate: 500})
	m, _ = s.counts()
	if res.Count != 77 || m["HEAD"] != 77 || res.Rate != 500 {
		t.Fatalf("count 77 at 500/s: runner %d, server %v", res.Count, m)
	}
	// 77 operations at 500/s take at least the 152 ms of their schedule.
	if res.Seconds < 0.152 {
		t.Errorf("schedule not kept: %.3fs", res.Seconds)
	}
}
