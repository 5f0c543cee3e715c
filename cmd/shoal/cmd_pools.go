package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"shoal"
	"shoal/wire"
)

// newPoolCommands are the admin subcommands for pools.
func newPoolCommands() []*cobra.Command {
	pool := &cobra.Command{Use: "pool add NAME LAYOUT | pool set DIR NAME", Short: "create pools and map directories to them"}
	pool.AddCommand(
		&cobra.Command{
			Use:   "add NAME LAYOUT",
			Short: "create a pool (or change its layout for new files): NAME is letters, digits, '.', '_', '-' (not gw); LAYOUT is replica:N or ec:K+M",
			Args:  cobra.ExactArgs(2),
			RunE: func(cmd *cobra.Command, args []string) error {
				if err := shoal.CheckPoolName(args[0]); err != nil {
					return err
				}
				if _, err := shoal.ParseLayout(args[1]); err != nil {
					return err
				}
				return adminCall(cmd, wire.PathAdminPoolAdd, wire.PoolAddRequest{Name: args[0], Layout: args[1]}, nil)
			},
		},
		&cobra.Command{
			Use:   "set DIR NAME",
			Short: "new files at or below DIR go to pool NAME",
			Args:  cobra.ExactArgs(2),
			RunE: func(cmd *cobra.Command, args []string) error {
				return adminCall(cmd, wire.PathAdminPoolSet, wire.PoolSetRequest{Dir: args[0], Pool: args[1]}, nil)
			},
		},
	)
	pools := &cobra.Command{
		Use:   "pools",
		Short: "list the pools and their layouts",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var ps []shoal.Pool
			if err := adminCall(cmd, wire.PathAdminPools, struct{}{}, &ps); err != nil {
				return err
			}
			if asJSON, _ := cmd.Flags().GetBool("json"); asJSON {
				return writeJSON(cmd.OutOrStdout(), ps)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 8, 2, ' ', 0)
			fmt.Fprintln(tw, "POOL\tLAYOUT\tSERVERS NEEDED")
			for _, p := range ps {
				fmt.Fprintf(tw, "%s\t%s\t%d\n", p.Name, p.Layout, p.Layout.Width())
			}
			return tw.Flush()
		},
	}
	return []*cobra.Command{pool, pools}
}

// adminCall makes one signed admin call and fails on a non-2xx answer.
func adminCall(cmd *cobra.Command, path string, req, reply any) error {
	cl, err := adminClient(cmd)
	if err != nil {
		return err
	}
	if _, err := cl.Call(path, req, reply); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
