package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"shoal"
	"shoal/cmd/shoal/config"
	"shoal/wire"
)

func newAdminCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "admin --md URL [--secret-file F] fsck|repair|drain|scrub|jobs|job|servers|server|status|pools|pool|quota|populate",
		Short: "operate a running system through md's signed admin endpoints",
	}
	fs := cmd.PersistentFlags()
	config.Flag(fs, "md", "admin.md", "")
	config.Flag(fs, "secret-file", "secret_file", "")
	config.Flag(fs, "ca-file", "tls.ca_file", "")
	fs.Bool("json", false, "print the raw JSON answer")
	fs.Bool("quiet", false, "no progress on stderr for long operations (fsck, repair, drain, scrub, populate)")
	cmd.AddCommand(newJobCommands()...)
	cmd.AddCommand(
		&cobra.Command{
			Use:   "servers",
			Short: "list the data servers md knows",
			Args:  cobra.NoArgs,
			RunE:  runServers,
		},
		newServerCommand(),
		newPopulateCommand(),
		newStatusCommand(),
		newUserCommand(),
		newQuotaCommand(),
	)
	cmd.AddCommand(newPoolCommands()...)
	return cmd
}

// adminClient is a signed client of md's internal API from the config.
func adminClient(cmd *cobra.Command) (*wire.Client, error) {
	c, _, err := setup(cmd)
	if err != nil {
		return nil, err
	}
	keys, err := loadKeys(&c)
	if err != nil {
		return nil, err
	}
	cl := wire.NewClient(c.Admin.MD, keys)
	if cl.HTTP.TLSConfig, err = clientTLS(&c, c.TLS.CAFile); err != nil {
		return nil, err
	}
	cl.Timeout = c.Admin.Timeout
	cl.HTTP.ReadTimeout = c.Admin.Timeout
	return cl, nil
}

func runServers(cmd *cobra.Command, _ []string) error {
	cl, err := adminClient(cmd)
	if err != nil {
		return err
	}
	var servers []shoal.Server
	if _, err := cl.Call(wire.PathAdminServers, struct{}{}, &servers); err != nil {
		return fmt.Errorf("servers: %w", err)
	}
	if asJSON, _ := cmd.Flags().GetBool("json"); asJSON {
		return writeJSON(cmd.OutOrStdout(), servers)
	}
	tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tURL\tPOOL\tSTATE\tFREE\tTOTAL\tLAST SEEN")
	now := time.Now()
	for _, s := range servers {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s ago\n", s.ID, s.URL, s.Pool, s.State,
			humanBytes(s.Free), humanBytes(s.Total), now.Sub(s.LastSeen).Round(time.Second))
	}
	return tw.Flush()
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// humanBytes writes n in binary units with one decimal, e.g. 12.3 GiB.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
