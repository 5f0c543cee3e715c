package main

import (
	"fmt"
	"log/slog"
	"net"

	"github.com/spf13/cobra"

	"shoal/cmd/shoal/config"
	"shoal/gw"
	"shoal/sign"
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
	keys, err := loadKeys(&c)
	if err != nil {
		return err
	}
	if c.GW.Listen == "" {
		c.GW.Listen = defaultGWListen
	}
	ln, err := listen(c.GW.Listen, false)
	if err != nil {
		return err
	}
	g, public, err := newGW(&c, keys, ln, c.GW.MD, log)
	if err != nil {
		ln.Close()
		return err
	}
	watchSIGHUP(cmd.Context(), log) // nothing of its own to reload yet: SIGHUP must not end it
	fmt.Fprintf(cmd.OutOrStdout(), "shoal gw: serving\ngw %s/\nid %s\nmd %s\nready\n", public, g.ID(), c.GW.MD)
	log.Info("gw ready", "id", g.ID(), "url", public, "md", c.GW.MD)
	return runServices(cmd.Context(), log, c.MD.ShutdownTimeout,
		[]service{{name: "gw", ln: ln, serve: g.Serve, close: g.Close}}, nil)
}

// newGW builds a gw on ln reporting to mdURL.
func newGW(c *config.Config, keys *sign.Keys, ln net.Listener, mdURL string, log *slog.Logger) (*gw.Server, string, error) {
	public := c.GW.PublicURL
	if public == "" {
		public = reachableURL(ln.Addr())
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
		HeartbeatInterval: c.GW.Heartbeat,
		Logger:            log.With("component", "gw"),
		Net:               c.Net.Guard(),
		AccessLog:         withComponent(accessLog(c), "gw"),
	})
	return g, public, err
}
