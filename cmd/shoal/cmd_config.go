package main

import (
	"strings"

	"github.com/spf13/cobra"

	"shoal/cmd/shoal/config"
)

func newConfigCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "inspect the configuration",
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "defaults",
		Short: "print a sample config file: every key with its default and meaning",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			d := config.Defaults()
			return config.WriteSample(cmd.OutOrStdout(), &d)
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "show",
		Short: "print the configuration in effect (file, environment and flags applied; passwords hidden)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := config.Load(cmd.Flags())
			if err != nil {
				return err
			}
			c.Catalog.DSN = redactDSN(c.Catalog.DSN)
			return config.WriteSample(cmd.OutOrStdout(), &c)
		},
	})
	return cmd
}

// redactDSN hides the password of a mysql://USER:PASS@… DSN.
func redactDSN(dsn string) string {
	rest, ok := strings.CutPrefix(dsn, "mysql://")
	at := strings.LastIndexByte(rest, '@')
	if !ok || at < 0 {
		return dsn
	}
	user, _, hasPass := strings.Cut(rest[:at], ":")
	if !hasPass {
		return dsn
	}
	return "mysql://" + user + ":***" + rest[at:]
}
