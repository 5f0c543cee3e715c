package main

import (
	"context"
	"fmt"
	"log/slog"
	"path"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"shoal"
	"shoal/bench"
	"shoal/catalog"
	"shoal/cmd/shoal/config"
	"shoal/wire"
)

func newPopulateCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "populate --catalog DSN [--memcached HOST:PORT] [--prefix P] [--files N] [--dirs D] [--size S]",
		Short: "bulk-load small inline files straight into the catalog (the tree `shoal bench stat` reads)",
		Long: `populate writes N files of S bytes (kept inline in the catalog) into D directories
under P, with multi-row INSERTs straight into the catalog: the fast way to build
a namespace to stat against. It names files like ` + "`shoal bench populate`" + ` does
(P/d0000/f0000000 …), so ` + "`shoal bench stat`" + ` with the same --prefix, --files and
--dirs reads them. It bypasses md: with --memcached (md's cache.memcached) it
then invalidates what md replicas keep there under P, so that a path they had
cached as missing is found at once; md's in-process tier (cache.l1, on without
memcached) keeps such answers up to cache.negative_ttl.`,
		Args: cobra.NoArgs,
		RunE: runPopulate,
	}
	fs := cmd.Flags()
	config.Flag(fs, "catalog", "catalog.dsn", "")
	config.Flag(fs, "memcached", "cache.memcached", "")
	fs.String("prefix", bench.DefaultLayout.Prefix, "directory holding the tree (created if missing)")
	fs.Int("files", bench.DefaultLayout.Files, "number of files")
	fs.Int("dirs", bench.DefaultLayout.Dirs, "number of directories")
	fs.String("size", "0", "bytes per file (at most 64KiB; content is zeros)")
	return cmd
}

func runPopulate(cmd *cobra.Command, _ []string) error {
	c, log, err := setup(cmd)
	if err != nil {
		return err
	}
	if c.Catalog.DSN == "" {
		return fmt.Errorf("catalog.dsn: give the catalog with --catalog sqlite:PATH or mysql://USER:PASS@HOST:PORT/DB")
	}
	fs := cmd.Flags()
	prefix, _ := fs.GetString("prefix")
	files, _ := fs.GetInt("files")
	dirs, _ := fs.GetInt("dirs")
	sizeText, _ := fs.GetString("size")
	size, err := config.ParseSize(sizeText)
	if err != nil {
		return fmt.Errorf("--size: %w", err)
	}
	prefix, _, err = shoal.CleanPath(prefix)
	if err != nil {
		return fmt.Errorf("--prefix: %w", err)
	}
	if files < 0 || dirs < 1 {
		return fmt.Errorf("--files must be ≥ 0 and --dirs ≥ 1")
	}
	ctx := cmd.Context()
	db, err := catalog.Open(ctx, catalogOptions(&c))
	if err != nil {
		return err
	}
	defer db.Close()
	forget, err := forgetter(ctx, db, &c, log)
	if err != nil {
		return err
	}
	defer forget.close()

	l := bench.Layout{Prefix: prefix, Files: files, Dirs: dirs}
	start := time.Now()
	if err := mkdirAll(ctx, db, prefix); err != nil {
		return err
	}
	forget.tree(prefix) // md may have cached it, or paths below it, as missing
	byDir := make([][]string, dirs)
	for i := range files {
		byDir[i%dirs] = append(byDir[i%dirs], path.Base(l.FilePath(i)))
	}
	quiet, _ := cmd.Flags().GetBool("quiet")
	p := newProgress(quiet)
	show := func(done int) {
		ms := time.Since(start).Milliseconds()
		p.show(wire.Progress{Op: "populate", Phase: "loading " + db.Dialect(), Done: int64(done), Total: int64(files), Unit: "files",
			Elapsed: ms, PhaseElapsed: ms})
	}
	done := 0
	for d, names := range byDir {
		dir := l.DirPath(d)
		if _, err := db.Mkdir(ctx, dir, time.Now()); err != nil && !shoal.IsKind(err, shoal.KindExist) {
			return err
		}
		// In steps, so that a large directory shows progress too.
		for len(names) > 0 {
			step := names[:min(populateStep, len(names))]
			names = names[len(step):]
			err := db.CreateFiles(ctx, dir, step, int64(size))
			forget.tree(dir) // also after an error: a batch may have landed
			if err != nil {
				return fmt.Errorf("after %d files: %w", done, err)
			}
			done += len(step)
			log.Debug("populate", "dir", dir, "files", done)
			show(done)
		}
	}
	p.end()
	took := time.Since(start)
	fmt.Fprintf(cmd.OutOrStdout(), "populate: %d files of %d bytes in %d directories under %s in %v (%.0f files/s, %s)\n",
		files, size, dirs, prefix, took.Round(time.Millisecond), float64(files)/took.Seconds(), db.Dialect())
	return nil
}

// populateStep is how many files populate loads between two progress
// reports (ten of catalog.CreateFiles' transactions).
const populateStep = 10 * catalog.BulkRowsPerTx

// mkdirAll creates p and its missing ancestors.
func mkdirAll(ctx context.Context, db *catalog.DB, p string) error {
	cur := ""
	for _, part := range strings.Split(strings.Trim(p, "/"), "/") {
		if part == "" {
			continue
		}
		cur += "/" + part
		if _, err := db.Mkdir(ctx, cur, time.Now()); err != nil && !shoal.IsKind(err, shoal.KindExist) {
			return err
		}
	}
	return nil
}

// cacheForgetter forgets what md replicas keep in memcached about the
// trees populate writes (nothing without cache.memcached).
type cacheForgetter struct {
	ctx    context.Context
	cached *cachedCatalog
}

func forgetter(ctx context.Context, db *catalog.DB, c *config.Config, log *slog.Logger) (cacheForgetter, error) {
	if len(c.Cache.Memcached) == 0 {
		return cacheForgetter{}, nil
	}
	cfg := *c
	cfg.Cache.L1 = "off"
	cc, err := withCache(db, &cfg, false, log)
	if err != nil {
		return cacheForgetter{}, err
	}
	return cacheForgetter{ctx, cc.(*cachedCatalog)}, nil
}

func (f cacheForgetter) tree(p string) {
	if f.cached != nil && p != "/" {
		f.cached.ForgetTree(f.ctx, p)
	}
}

// close closes the memcached client only: the catalog is the caller's.
func (f cacheForgetter) close() {
	if f.cached != nil {
		f.cached.mc.Close()
	}
}
