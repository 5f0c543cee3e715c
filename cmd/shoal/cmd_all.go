package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"shoal"
	"shoal/cmd/shoal/config"
	"shoal/gw"
	"shoal/metrics"
)

func newAllCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "all --data DIR [--listen HOST:PORT]",
		Short: "run md, one data server and an SQLite catalog in one process",
		Long: `shoal all is the embedded single node: md answers HTTP/WebDAV on --listen,
a data server stores files under DIR/disk and listens on --disk-listen, the
catalog is SQLite at DIR/catalog.db, and the cluster secret is DIR/secret
(created on first start) unless --secret-file is given. Nothing else to install.`,
		Args: cobra.NoArgs,
		RunE: runAll,
	}
	fs := cmd.Flags()
	config.Flag(fs, "data", "all.data", "")
	config.Flag(fs, "layout", "all.layout", "")
	config.Flag(fs, "listen", "md.listen", "")
	config.Flag(fs, "disk-listen", "disk.listen", "data server HOST:PORT (default: the --listen host, port + 1; port 0 if --listen has port 0)")
	config.Flag(fs, "secret-file", "secret_file", "")
	config.Flag(fs, "data-mode", "md.data_mode", "")
	config.Flag(fs, "memcached", "cache.memcached", "")
	config.Flag(fs, "tls", "all.tls", "")
	return cmd
}

func runAll(cmd *cobra.Command, _ []string) error {
	c, log, err := setup(cmd)
	if err != nil {
		return err
	}
	if len(c.All.Data) == 0 {
		return fmt.Errorf("all.data: give a data directory with --data DIR (or one per disk: --data DIR1,DIR2,DIR3)")
	}
	if err := c.CheckHeartbeats(true, len(c.All.Data) > 1 || c.GW.Listen != ""); err != nil {
		return err
	}
	if err := checkExposure(&c); err != nil {
		return err
	}
	dir, err := filepath.Abs(c.All.Data[0])
	if err != nil {
		return err
	}
	diskDir := filepath.Join(dir, "disk")
	if err := os.MkdirAll(diskDir, 0o700); err != nil {
		return err
	}
	// Older versions made these group-readable; the catalog holds small
	// files' contents and the secret signs every data URL.
	for _, d := range []string{dir, diskDir} {
		if err := tightenMode(d, 0o700); err != nil {
			return err
		}
	}
	if c.SecretFile == "" {
		c.SecretFile = filepath.Join(dir, "secret")
		if err := ensureSecret(c.SecretFile); err != nil {
			return fmt.Errorf("secret: %w", err)
		}
		if err := tightenMode(c.SecretFile, 0o600); err != nil {
			return err
		}
	}
	keys, err := loadKeys(&c)
	if err != nil {
		return err
	}
	if c.Catalog.DSN == "" {
		c.Catalog.DSN = "sqlite:" + filepath.Join(dir, "catalog.db")
	}
	extraDirs, err := diskDirs(&c)
	if err != nil {
		return err
	}
	if len(c.Disk.Data) == 0 {
		c.Disk.Data = []string{diskDir}
	}
	if err := keepServerIDs(&c, dir, extraDirs); err != nil {
		return err
	}
	if c.Disk.Listen == "" {
		if c.Disk.Listen, err = nextPort(c.MD.Listen); err != nil {
			return fmt.Errorf("md.listen: %w", err)
		}
	}

	ctx := cmd.Context()
	reloads := watchSIGHUP(ctx, log)
	tlsOf, err := setupAllTLS(ctx, &c, log, reloads, dir)
	if err != nil {
		return err
	}
	// md's internal API for the data server gets its own loopback port: it
	// stays open while the public port drains at shutdown, so uploads in
	// flight can still commit.
	specs := []listenSpec{{c.MD.Listen, c.MD.ReusePort}, {c.Disk.Listen, false}, {"127.0.0.1:0", false}}
	withGW := len(extraDirs) > 0 || c.GW.Listen != ""
	if withGW {
		specs = append(specs, listenSpec{gwAddr(&c), false})
	}
	lns, err := listenAll(specs...)
	if err != nil {
		return err
	}
	mdLn, diskLn, internalLn := lns[0], lns[1], lns[2]
	closeAll := func() {
		for _, ln := range lns {
			ln.Close()
		}
	}
	mdURL := tlsOf.md.url(mdLn.Addr())
	diskURL := c.Disk.PublicURL
	if diskURL == "" {
		diskURL = tlsOf.disk.url(diskLn.Addr())
	}

	t, err := newTPC(&c, tlsOf.caFile, log)
	if err != nil {
		closeAll()
		return err
	}
	extras, err := startExtraDisks(&c, keys, extraDirs, tlsOf, tlsOf.internal.url(internalLn.Addr()), t, log)
	if err != nil {
		closeAll()
		return err
	}
	for _, x := range extras {
		lns = append(lns, x.ln)
	}
	// Over SQLite, shoal all is its catalog's only md: the catalog is
	// embedded, single node (README, "Locks").
	cat, err := openCatalog(ctx, &c, strings.HasPrefix(c.Catalog.DSN, "sqlite:"), log)
	if err != nil {
		closeAll()
		return err
	}
	if err := setDefaultLayout(ctx, &c, cat); err != nil {
		cat.Close()
		closeAll()
		return err
	}
	a, err := newAuth(ctx, &c, mdLn.Addr(), reloads, log)
	if err != nil {
		cat.Close()
		closeAll()
		return err
	}
	reg := newRegistry()
	reg.Register(metrics.AuthCollector(a.Stats), metrics.TPCCollector(t.Stats))
	observed := observeMD(reg, cat)
	runner, err := newRunner(&c, observed, keys, tlsOf.peer, log)
	if err != nil {
		cat.Close()
		closeAll()
		return err
	}
	// The data server first: md serves and writes its files itself
	// (all.local_data).
	disk, err := newDisk(&c, keys, c.Disk.Data, tlsOf.internal.url(internalLn.Addr()), diskURL, tlsOf.toMD, t, log)
	if err != nil {
		closeRunner(runner)
		cat.Close()
		closeAll()
		return err
	}
	mds, err := newMD(&c, observed, keys, runner, a, tlsOf.peer, t, mdLn.Addr(), log, disk)
	if err != nil {
		disk.Close()
		closeRunner(runner)
		cat.Close()
		closeAll()
		return err
	}

	public, internal := observedMD(mds.NewHTTPServer(), reg, "md"), observedMD(mds.NewHTTPServer(), reg, "md-internal")
	diskHTTP := observeDisk(reg, disk, c.Net.Guard())
	services := []service{ // closed in this order
		{name: "md", ln: tlsOf.md.listener(mdLn), serve: guarded(public, c.Net.Guard()), close: shutdownMD(mds, runner, public.Shutdown)},
		{name: "disk", ln: tlsOf.disk.listener(diskLn), serve: diskHTTP.Serve, close: diskHTTP.Close},
		{name: "md-internal", ln: tlsOf.internal.listener(internalLn), serve: guarded(internal, c.Net.Guard()), close: internal.Shutdown},
	}
	for _, x := range extras {
		services = append(services[:len(services)-1], service{name: "disk " + x.dir, ln: x.ln, serve: x.node.Serve, close: x.node.Close}, services[len(services)-1])
	}
	var gwURL, gwID string
	var g *gw.Server
	if withGW {
		var public string
		g, public, err = newGW(&c, keys, lns[3], tlsOf.disk, tlsOf.peer, tlsOf.internal.url(internalLn.Addr()), t, log, reg)
		if err != nil {
			closeRunner(runner)
			mds.Close()
			cat.Close()
			closeAll()
			return err
		}
		gwURL, gwID = public, g.ID()
		services = append(services[:1], append([]service{{name: "gw", ln: tlsOf.disk.listener(lns[3]), serve: g.Serve, close: g.Close}}, services[1:]...)...)
	}
	cleanup := func() error { return errors.Join(mds.Close(), cat.Close()) }
	// Taken before anything serves: the first heartbeat must not predate it.
	start := time.Now()
	// A part that never registers (md refuses its heartbeats: a
	// certificate without its address, an http URL in a TLS cluster)
	// ends shoal all with the reason, rather than leave it up, never ready.
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	notReadyErr := make(chan error, 1)
	notReady := func(err error) {
		notReadyErr <- err
		stop()
	}
	limit := registerWithin(&c, withGW)
	go func() {
		fail := func(what string, err error) {
			notReady(fmt.Errorf("%s did not register with md within %v (see the log's heartbeat lines): %w", what, limit, err))
		}
		if err := waitRegistered(ctx, cat, disk.ID(), diskURL, start, limit); err != nil {
			fail("the data server of "+c.Disk.Data[0], err)
			return
		}
		for _, x := range extras {
			if err := waitRegistered(ctx, cat, x.node.disk.ID(), x.url, start, limit); err != nil {
				fail("the data server of "+x.dir, err)
				return
			}
		}
		if gwID != "" {
			if err := waitRegistered(ctx, cat, gwID, gwURL, start, limit); err != nil {
				fail("the gw", err)
				return
			}
			// The gw read the list before the data servers registered:
			// after a restart on new ports it named their old URLs.
			if err := g.RefreshServers(); err != nil {
				notReady(fmt.Errorf("the gw could not read md's server list: %w", err))
				return
			}
		}
		if runner != nil {
			runner.Start() // jobs resumed now find the data server up
		}
		out := fmt.Sprintf("shoal all: serving\nmd   %s/\ndisk %s/\n", mdURL, diskURL)
		for _, x := range extras {
			out += fmt.Sprintf("disk %s/\n", x.url)
		}
		if gwURL != "" {
			out += fmt.Sprintf("gw   %s/\n", gwURL)
		}
		data := []string{dir}
		for _, x := range extraDirs {
			data = append(data, filepath.Dir(x))
		}
		fmt.Fprintf(cmd.OutOrStdout(), "%sdata %s\n%sready\n", out, strings.Join(data, ","), tlsOf.summary())
		log.Info("ready", "md", mdURL, "md_internal", tlsOf.internal.url(internalLn.Addr()), "disk", diskURL, "data", strings.Join(data, ","), "data_mode", c.MD.DataMode,
			"tls_ca", tlsOf.caFile, "tls_capath", tlsOf.caPath, "tls_sha256", tlsOf.md.fingerprint())
	}()
	err = runServices(ctx, log, c.MD.ShutdownTimeout, services, cleanup)
	select {
	case nr := <-notReadyErr:
		return errors.Join(nr, err)
	default:
		return err
	}
}

// registerWithin is how long shoal all waits for its data servers and gw
// to register: fifteen heartbeats (30 s by default).
func registerWithin(c *config.Config, withGW bool) time.Duration {
	hb := max(c.Disk.Heartbeat, 100*time.Millisecond)
	if withGW {
		hb = max(hb, c.GW.Heartbeat)
	}
	return 15 * hb
}

// waitRegistered waits until md has taken a heartbeat of data server id,
// at url, since start: a registration left by an earlier run does not count.
func waitRegistered(ctx context.Context, cat shoal.Catalog, id, url string, start time.Time, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		servers, err := cat.Servers(ctx)
		if err == nil {
			for _, s := range servers {
				if s.ID == id && strings.TrimRight(s.URL, "/") == strings.TrimRight(url, "/") && !s.LastSeen.Before(start) {
					return nil
				}
			}
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = fmt.Errorf("no heartbeat from %s within %v", id, limit)
			}
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
