package main

import (
	"context"
	"fmt"
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
		Use:   "populate --catalog DSN [--prefix P] [--files N] [--dirs D] [--size S]",
		Short: "bulk-load small inline files straight into the catalog (the tree `shoal bench stat` reads)",
		Long: `populate writes N files of S bytes (kept inline in the catalog) into D directories
under P, with multi-row INSERTs straight into the catalog: the fast way to build
a namespace to stat against. It names files like ` + "`shoal bench populate`" + ` does
(P/d0000/f0000000 …), so ` + "`shoal bench stat`" + ` with the same --prefix, --files and
--dirs reads them. It bypasses md: run it on paths md has not cached (a new
prefix), or before md starts.`,
		Args: cobra.NoArgs,
		RunE: runPopulate,
	}
	fs := cmd.Flags()
	config.Flag(fs, "catalog", "catalog.dsn", "")
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
	db, err := catalog.Open(ctx, catalog.Options{DSN: c.Catalog.DSN, MaxOpenConns: c.Catalog.MaxOpenConns,
		MaxIdleConns: c.Catalog.MaxIdleConns, ConnMaxLifetime: c.Catalog.ConnMaxLifetime, BusyTimeout: c.Catalog.BusyTimeout, CallTimeout: c.Catalog.CallTimeout})
	if err != nil {
		return err
	}
	defer db.Close()

	l := bench.Layout{Prefix: prefix, Files: files, Dirs: dirs}
	start := time.Now()
	if err := mkdirAll(ctx, db, prefix); err != nil {
		return err
	}
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
		if err := db.CreateFiles(ctx, dir, names, int64(size)); err != nil {
			return fmt.Errorf("after %d files: %w", done, err)
		}
		done += len(names)
		log.Debug("populate", "dir", dir, "files", done)
		show(done)
	}
	p.end()
	took := time.Since(start)
	fmt.Fprintf(cmd.OutOrStdout(), "populate: %d files of %d bytes in %d directories under %s in %v (%.0f files/s, %s)\n",
		files, size, dirs, prefix, took.Round(time.Millisecond), float64(files)/took.Seconds(), db.Dialect())
	return nil
}

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
