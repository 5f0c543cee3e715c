package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"shoal"
	"shoal/wire"
)

// newServerCommand is the admin subcommand that changes a server's state:
// drain takes a server out of service; activate takes it back.
func newServerCommand() *cobra.Command {
	server := &cobra.Command{Use: "server activate ID", Short: "change a data server's state"}
	server.AddCommand(&cobra.Command{
		Use: "activate ID",
		Short: "put a draining server back to active (new writes go to it again): undoes a drain that stalled, " +
			"failed or was cancelled; refused for a retired server and while a drain job of it runs",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var sv shoal.Server
			if err := adminCall(cmd, wire.PathAdminServerActivate, wire.ServerRequest{Server: args[0]}, &sv); err != nil {
				return err
			}
			if asJSON, _ := cmd.Flags().GetBool("json"); asJSON {
				return writeJSON(cmd.OutOrStdout(), sv)
			}
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "server %s  pool %s  state %s\n", sv.ID, sv.Pool, sv.State)
			return err
		},
	})
	return server
}
