package main

import (
	"log/slog"
	"net"
	"os"

	"shoal/cmd/shoal/config"
	"shoal/tlsconf"
	"shoal/tpc"
)

// newTPC builds the process's third-party copy client from the tpc
// section: one per process, shared by md and its data server in shoal
// all. Its https peers are verified against the system's roots, the
// cluster's CA (clusterCA: tls.ca_file, or shoal all's private CA) and
// tpc.ca_file and tpc.ca_dir, at tls.min_version at least.
func newTPC(c *config.Config, clusterCA string, log *slog.Logger) (*tpc.Client, error) {
	if c.TPC.CAFile != "" {
		if _, err := tlsconf.LoadPool(c.TPC.CAFile); err != nil {
			return nil, &keyError{key: "tpc.ca_file", err: err}
		}
	}
	if c.TPC.CADir != "" {
		if _, err := os.ReadDir(c.TPC.CADir); err != nil {
			return nil, &keyError{key: "tpc.ca_dir", err: err}
		}
	}
	t, err := tpc.New(tpc.Options{
		MinTLS:           minTLSVersion(c),
		CAFiles:          []string{clusterCA, c.TPC.CAFile},
		CADirs:           []string{c.TPC.CADir},
		AllowLocal:       c.TPC.AllowLocal,
		Deny:             c.TPC.Deny,
		ConnectTimeout:   c.TPC.ConnectTimeout,
		FirstByteTimeout: c.TPC.FirstByteTimeout,
		IdleTimeout:      c.TPC.IdleTimeout,
		MarkerInterval:   c.TPC.MarkerInterval,
		UserAgent:        "shoal-tpc/" + version,
		Logger:           log.With("component", "tpc"),
	})
	if err != nil {
		return nil, err
	}
	if c.TPC.AllowLocal {
		log.Warn("tpc.allow_local is on: third-party copies may reach loopback, link-local and this host's addresses and shoal's own servers (for tests and labs)")
	}
	return t, nil
}

// localURLs are md's own URLs and names: a COPY whose Destination names
// one is a plain WebDAV COPY (tpc.IsLocal).
func localURLs(c *config.Config, mdAddr net.Addr) []string {
	out := defaultAudiences(mdAddr)
	out = append(out, c.Auth.Audiences...)
	out = append(out, c.MD.AllowedHosts...)
	return append(out, c.TPC.LocalURLs...)
}
