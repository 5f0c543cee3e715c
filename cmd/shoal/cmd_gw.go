package main

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"

	"github.com/spf13/cobra"
	"github.com/valyala/fasthttp"

	"shoal/cmd/shoal/config"
	"shoal/gw"
	"shoal/metrics"
	"shoal/sign"
	"shoal/tpc"
)

func newGWCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "gw --listen HOST:PORT --md URL [--secret-file F]",
		Short: "run a gateway: erasure-coded (ec:K+M) files and mirrored replica:N writes over the data servers",
		Args:  cobra.NoArgs,
		RunE:  runGW,
	}
	fs := cmd.Flags()
	config.Flag(fs, "listen", "gw.listen", "HOST:PORT the gw listens on (default 127.0.0.1:8082)")
	config.Flag(fs, "md", "gw.md", "")
	config.Flag(fs, "secret-file", "secret_file", "")
	config.Flag(fs, "public-url", "gw.public_url", "")
	config.Flag(fs, "id", "gw.id", "")
	config.Flag(fs, "tls-cert", "tls.gw_cert_file", "")
	config.Flag(fs, "tls-key", "tls.gw_key_file", "")
	config.Flag(fs, "ca-file", "tls.ca_file", "")
	return cmd
}

// defaultGWListen is where a standalone gw listens when gw.listen is empty.
const defaultGWListen = "127.0.0.1:8082"

func runGW(cmd *cobra.Command, _ []string) error {
	c, log, err := setup(cmd)
	if err != nil {
		return err
	}
	if c.GW.MD == "" {
		return fmt.Errorf("gw.md: give md's URL with --md http://HOST:PORT")
	}
	if err := c.CheckHeartbeats(false, true); err != nil {
		return err
	}
	keys, err := loadKeys(&c)
	if err != nil {
		return err
	}
	if c.GW.Listen == "" {
		c.GW.Listen = defaultGWListen
	}
	reloads := watchSIGHUP(cmd.Context(), log)
	cert, err := loadServerCert(cmd.Context(), &c, log, reloads, c.TLS.GW())
	if err != nil {
		return err
	}
	client, err := clientTLS(&c, c.TLS.CAFile)
	if err != nil {
		return err
	}
	ln, err := listen(c.GW.Listen, false)
	if err != nil {
		return err
	}
	t, err := newTPC(&c, c.TLS.CAFile, log)
	if err != nil {
		ln.Close()
		return err
	}
	g, public, err := newGW(&c, keys, ln, cert, client, c.GW.MD, t, log, newRegistry())
	if err != nil {
		ln.Close()
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "shoal gw: serving\ngw %s/\nid %s\nmd %s\n%sready\n", public, g.ID(), c.GW.MD, tlsSummary("", "", cert.fingerprint()))
	log.Info("gw ready", "id", g.ID(), "url", public, "md", c.GW.MD)
	return runServices(cmd.Context(), log, c.MD.ShutdownTimeout,
		[]service{{name: "gw", ln: cert.listener(ln), serve: g.Serve, close: g.Close}}, nil)
}

// newGW builds a gw on ln (served with cert when set) reporting to mdURL;
// client verifies md and the data servers; t makes the third-party copies
// md sends it; reg gets its request metrics and health check (observeGW).
func newGW(c *config.Config, keys *sign.Keys, ln net.Listener, cert *serverCert, client *tls.Config, mdURL string, t *tpc.Client, log *slog.Logger, reg *metrics.Registry) (*gw.Server, string, error) {
	public := c.GW.PublicURL
	if public == "" {
		public = cert.url(ln.Addr())
	}
	id := c.GW.ID
	if id == "" {
		id = "gw-" + ln.Addr().String()
	}
	g, err := gw.NewServer(gw.ServerOptions{
		ID:                id,
		PublicURL:         public,
		MDURL:             mdURL,
		Keys:              keys,
		StripeSize:        int(c.GW.StripeSize),
		MaxBodySize:       int64(c.GW.MaxBody),
		HeartbeatInterval: c.GW.Heartbeat,
		Logger:            log.With("component", "gw"),
		Net:               c.Net.Guard(),
		AccessLog:         withComponent(accessLog(c), "gw"),
		ClientTLS:         client,
		TPC:               t,
		Wrap:              func(h fasthttp.RequestHandler) fasthttp.RequestHandler { return metrics.Middleware(h, reg, "gw") },
	})
	if err != nil {
		return nil, "", err
	}
	observeGW(reg, g)
	return g, public, nil
}
