package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"shoal/cmd/shoal/config"
	"shoal/metrics"
)

func newDiskCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "disk --listen HOST:PORT --md URL --data DIR[,DIR…] [--secret-file F]",
		Short: "run a data server over local directories (one per disk)",
		Args:  cobra.NoArgs,
		RunE:  runDisk,
	}
	fs := cmd.Flags()
	config.Flag(fs, "listen", "disk.listen", "HOST:PORT the data server listens on (default 127.0.0.1:8081)")
	config.Flag(fs, "md", "disk.md", "")
	config.Flag(fs, "data", "disk.data", "")
	config.Flag(fs, "secret-file", "secret_file", "")
	config.Flag(fs, "public-url", "disk.public_url", "")
	config.Flag(fs, "id", "disk.id", "")
	config.Flag(fs, "pool", "disk.pool", "")
	config.Flag(fs, "tls-cert", "tls.disk_cert_file", "")
	config.Flag(fs, "tls-key", "tls.disk_key_file", "")
	config.Flag(fs, "ca-file", "tls.ca_file", "")
	return cmd
}

// defaultDiskListen is where a standalone data server listens when
// disk.listen is empty.
const defaultDiskListen = "127.0.0.1:8081"

func runDisk(cmd *cobra.Command, _ []string) error {
	c, log, err := setup(cmd)
	if err != nil {
		return err
	}
	if len(c.Disk.Data) == 0 {
		return fmt.Errorf("disk.data: give at least one data directory with --data DIR[,DIR…]")
	}
	if c.Disk.MD == "" {
		return fmt.Errorf("disk.md: give md's URL with --md http://HOST:PORT")
	}
	if err := c.CheckHeartbeats(true, false); err != nil {
		return err
	}
	keys, err := loadKeys(&c)
	if err != nil {
		return err
	}
	if c.Disk.Listen == "" {
		c.Disk.Listen = defaultDiskListen
	}
	reloads := watchSIGHUP(cmd.Context(), log)
	cert, err := loadServerCert(cmd.Context(), &c, log, reloads, c.TLS.Disk())
	if err != nil {
		return err
	}
	toMD, err := clientTLS(&c, c.TLS.CAFile)
	if err != nil {
		return err
	}
	ln, err := listen(c.Disk.Listen, false)
	if err != nil {
		return err
	}
	public := c.Disk.PublicURL
	if public == "" {
		public = cert.url(ln.Addr())
	}
	t, err := newTPC(&c, c.TLS.CAFile, log)
	if err != nil {
		ln.Close()
		return err
	}
	disk, err := newDisk(&c, keys, c.Disk.Data, c.Disk.MD, public, toMD, t, log)
	if err != nil {
		ln.Close()
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "shoal disk: serving\ndisk %s/\nid   %s\nmd   %s\n%sready\n", public, disk.ID(), c.Disk.MD, tlsSummary("", "", cert.fingerprint()))
	log.Info("data server ready", "id", disk.ID(), "url", public, "md", c.Disk.MD, "dirs", c.Disk.Data)
	reg := newRegistry()
	reg.Register(metrics.TPCCollector(t.Stats))
	observed := observeDisk(reg, disk, c.Net.Guard())
	return runServices(cmd.Context(), log, c.MD.ShutdownTimeout,
		[]service{{name: "disk", ln: cert.listener(ln), serve: observed.Serve, close: observed.Close}}, nil)
}
