package main

import (
	"crypto/tls"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"shoal/cmd/shoal/config"
	"shoal/metrics"
)

func newMDCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "md --listen HOST:PORT --catalog DSN [--secret-file F] [--memcached HOST:PORT,…]",
		Short: "run a metadata frontend (stateless; run as many as you like over one catalog)",
		Args:  cobra.NoArgs,
		RunE:  runMD,
	}
	fs := cmd.Flags()
	config.Flag(fs, "listen", "md.listen", "")
	config.Flag(fs, "catalog", "catalog.dsn", "")
	config.Flag(fs, "secret-file", "secret_file", "")
	config.Flag(fs, "memcached", "cache.memcached", "")
	config.Flag(fs, "data-mode", "md.data_mode", "")
	config.Flag(fs, "reuseport", "md.reuseport", "")
	config.Flag(fs, "tls-cert", "tls.md_cert_file", "")
	config.Flag(fs, "tls-key", "tls.md_key_file", "")
	config.Flag(fs, "ca-file", "tls.ca_file", "")
	return cmd
}

func runMD(cmd *cobra.Command, _ []string) error {
	c, log, err := setup(cmd)
	if err != nil {
		return err
	}
	if c.Catalog.DSN == "" {
		return fmt.Errorf("catalog.dsn: give the catalog with --catalog sqlite:PATH or mysql://USER:PASS@HOST:PORT/DB")
	}
	if err := checkExposure(&c); err != nil {
		return err
	}
	keys, err := loadKeys(&c)
	if err != nil {
		return err
	}
	reloads := watchSIGHUP(cmd.Context(), log)
	cert, err := loadServerCert(cmd.Context(), &c, log, reloads, c.TLS.MD())
	if err != nil {
		return err
	}
	// md serving TLS, or a cluster CA given: the cluster runs TLS, and md
	// takes only data servers and gws that serve https with a certificate
	// of that CA (md.Options.PeerTLS).
	var peerTLS *tls.Config
	if cert != nil || c.TLS.CAFile != "" {
		if peerTLS, err = clientTLS(&c, c.TLS.CAFile); err != nil {
			return err
		}
	}
	ln, err := listen(c.MD.Listen, c.MD.ReusePort)
	if err != nil {
		return err
	}
	cat, err := openCatalog(cmd.Context(), &c, false, log)
	if err != nil {
		ln.Close()
		return err
	}
	a, err := newAuth(cmd.Context(), &c, ln.Addr(), reloads, log)
	if err != nil {
		cat.Close()
		ln.Close()
		return err
	}
	t, err := newTPC(&c, c.TLS.CAFile, log)
	if err != nil {
		cat.Close()
		ln.Close()
		return err
	}
	reg := newRegistry()
	reg.Register(metrics.AuthCollector(a.Stats), metrics.TPCCollector(t.Stats))
	observed := observeMD(reg, cat)
	runner, err := newRunner(&c, observed, keys, peerTLS, log)
	if err != nil {
		cat.Close()
		ln.Close()
		return err
	}
	mds, err := newMD(&c, observed, keys, runner, a, peerTLS, t, ln.Addr(), log, nil)
	if err != nil {
		closeRunner(runner)
		cat.Close()
		ln.Close()
		return err
	}
	if runner != nil {
		runner.Start()
	}
	url := cert.url(ln.Addr())
	fmt.Fprintf(cmd.OutOrStdout(), "shoal md: serving\nmd   %s/\n%sready\n", url, tlsSummary(c.TLS.CAFile, "", cert.fingerprint()))
	log.Info("md ready", "url", url, "data_mode", c.MD.DataMode, "memcached", c.Cache.Memcached, "tls_sha256", cert.fingerprint())
	public := observedMD(mds.NewHTTPServer(), reg, "md")
	return runServices(cmd.Context(), log, c.MD.ShutdownTimeout,
		[]service{{name: "md", ln: cert.listener(ln), serve: guarded(public, c.Net.Guard()), close: shutdownMD(mds, runner, public.Shutdown)}},
		func() error { return errors.Join(mds.Close(), cat.Close()) })
}
