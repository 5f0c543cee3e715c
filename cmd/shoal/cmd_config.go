package main

import (
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
		Short: "print the configuration in effect (file, environment and flags applied)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := config.Load(cmd.Flags())
			if err != nil {
				return err
			}
			return config.WriteSample(cmd.OutOrStdout(), &c)
		},
	})
	return cmd
}
