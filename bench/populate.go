package bench

import (
	"context"
	"strings"
)

// Populate creates layout l on the target: the prefix and its
// directories (concurrent MKCOL; existing ones are fine), then every file
// with size bytes (concurrent PUT, each exactly once). It returns the
// Result of the file phase: its req/s is the creation rate.
func Populate(ctx context.Context, opts Options, l Layout, size int64) (Result, error) {
	r, err := NewRunner(opts, Spec{Name: "populate", Op: OpPopulate, Size: size, Paths: l.FilePaths()})
	if err != nil {
		return Result{}, err
	}
	defer r.Close()
	if err := r.mkcolAll(ctx, strings.TrimRight(l.Prefix, "/")); err != nil {
		return Result{}, err
	}
	dirs := l.DirPaths()
	if err := r.parallel(ctx, len(dirs), func(w *worker, i int) error { return w.mkcol(dirs[i]) }); err != nil {
		return Result{}, err
	}
	res := r.Phase(ctx, Limits{Count: uint64(l.Files)})
	return res, nil
}
