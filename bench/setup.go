package bench

import (
	"context"
	"path"
	"strconv"
	"strings"
	"sync"

	"shoal"
)

// Setup prepares what the workload needs on the target, outside any
// measured phase: the directories writes go to, and for get and mix
// without given paths, spec.Objects objects of spec.Size bytes. The
// requests it sends are counted in SetupRequests, not in any Result.
func (r *Runner) Setup(ctx context.Context) error {
	const op = "bench.Setup"
	spec := &r.spec
	switch spec.Op {
	case OpGet, OpMix:
		if len(spec.Paths) > 0 {
			return nil
		}
		if spec.Dir == "" {
			spec.Dir = "/bench/get-" + FormatSize(spec.Size)
		}
		if err := r.mkcolAll(ctx, spec.Dir); err != nil {
			return err
		}
		paths := make([]string, spec.Objects)
		for i := range paths {
			paths[i] = spec.Dir + "/o" + strconv.Itoa(i)
		}
		err := r.parallel(ctx, len(paths), func(w *worker, i int) error {
			hops := w.t.redirects
			status, _, err := w.exchange("PUT", []byte(r.basePath+escapePath(paths[i])), "", spec.Size)
			r.countSetup("PUT", 1)
			r.countSetup("redirects", w.t.redirects-hops)
			if err != nil {
				return shoal.E(op, paths[i], shoal.KindUnavailable, err)
			}
			if status/100 != 2 {
				return shoal.Errorf(op, shoal.KindOther, "PUT %s: status %d", paths[i], status)
			}
			return nil
		})
		if err != nil {
			return err
		}
		spec.Paths = paths
		r.setPaths(paths)
	case OpPut:
		if spec.Dir == "" {
			spec.Dir = "/bench/put-" + FormatSize(spec.Size)
		}
		r.dirURI = r.basePath + escapePath(strings.TrimRight(spec.Dir, "/"))
		return r.mkcolAll(ctx, spec.Dir)
	case OpCreate:
		if spec.Dir == "" {
			spec.Dir = "/bench/files-" + FormatSize(spec.Size) + "-" + r.runID
		}
		r.dirURI = r.basePath + escapePath(strings.TrimRight(spec.Dir, "/"))
		return r.mkcolAll(ctx, spec.Dir)
	}
	return nil
}

// SetupRequests is how many requests Setup and Populate's directory pass
// sent, per method, redirect hops included.
func (r *Runner) SetupRequests() map[string]uint64 {
	r.setupMu.Lock()
	defer r.setupMu.Unlock()
	out := map[string]uint64{}
	for k, v := range r.setupCount {
		if v > 0 {
			out[k] = v
		}
	}
	return out
}

func (r *Runner) countSetup(method string, n uint64) {
	r.setupMu.Lock()
	if r.setupCount == nil {
		r.setupCount = map[string]uint64{}
	}
	r.setupCount[method] += n
	r.setupMu.Unlock()
}

// mkcolAll creates dir and its parents; existing ones (405) are fine.
func (r *Runner) mkcolAll(ctx context.Context, dir string) error {
	dir = path.Clean("/" + dir)
	var parts []string
	for d := dir; d != "/"; d = path.Dir(d) {
		parts = append(parts, d)
	}
	w := r.workers[0]
	for i := len(parts) - 1; i >= 0; i-- {
		if err := ctx.Err(); err != nil {
			return shoal.E("bench.mkcol", parts[i], shoal.KindTimeout, err)
		}
		if err := w.mkcol(parts[i]); err != nil {
			return err
		}
	}
	return nil
}

// mkcol creates one collection; 405 (exists) counts as done.
func (w *worker) mkcol(dir string) error {
	const op = "bench.mkcol"
	hops := w.t.redirects
	status, _, err := w.exchange("MKCOL", []byte(w.r.basePath+escapePath(strings.TrimRight(dir, "/")+"/")), "", -1)
	w.r.countSetup("MKCOL", 1)
	w.r.countSetup("redirects", w.t.redirects-hops)
	if err != nil {
		return shoal.E(op, dir, shoal.KindUnavailable, err)
	}
	if status/100 != 2 && status != 405 {
		return shoal.Errorf(op, shoal.KindOther, "MKCOL %s: status %d", dir, status)
	}
	return nil
}

// parallel runs fn(i) for i < n over the runner's workers.
func (r *Runner) parallel(ctx context.Context, n int, fn func(w *worker, i int) error) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for _, w := range r.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w.id; i < n; i += len(r.workers) {
				if ctx.Err() != nil {
					return
				}
				if err := fn(w, i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		first = shoal.E("bench", shoal.KindTimeout, ctx.Err())
	}
	return first
}
