package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"shoal"
	"shoal/cmd/shoal/config"
	"shoal/wire"
)

// newQuotaCommand is `shoal admin quota set|rm|ls`.
func newQuotaCommand() *cobra.Command {
	quota := &cobra.Command{
		Use:   "quota set DIR [--bytes SIZE] [--files N] | quota rm DIR | quota ls",
		Short: "limit what a directory's subtree may hold (every quota on a path applies)",
	}
	var bytes string
	var files int64
	set := &cobra.Command{
		Use:   "set DIR [--bytes SIZE] [--files N]",
		Short: "put a quota on DIR, or change the limits named, and count what it holds now",
		Long: `Put a quota on DIR, or change its limits, and count what DIR holds now.

Only the limits named change: "quota set /g --files 200" keeps /g's byte
limit. 0 removes that limit ("--bytes 0" leaves only the entry limit); a
quota keeps at least one limit: "quota rm DIR" drops it whole.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			req := wire.QuotaSetRequest{Dir: args[0]}
			if cmd.Flags().Changed("bytes") {
				limit, err := config.ParseSize(bytes)
				if err != nil {
					return fmt.Errorf("--bytes: %w", err)
				}
				req.Bytes = new(int64(limit))
			}
			if cmd.Flags().Changed("files") {
				if files < 0 {
					return fmt.Errorf("--files: %d must be at least 0 (0 removes the entry limit)", files)
				}
				req.Files = new(files)
			}
			if req.Bytes == nil && req.Files == nil {
				return fmt.Errorf("quota set: give --bytes, --files or both")
			}
			var q shoal.Quota
			if err := adminCall(cmd, wire.PathAdminQuotaSet, req, &q); err != nil {
				return err
			}
			if asJSON, _ := cmd.Flags().GetBool("json"); asJSON {
				return writeJSON(cmd.OutOrStdout(), q)
			}
			return printQuotas(cmd.OutOrStdout(), []shoal.Quota{q})
		},
	}
	set.Flags().StringVar(&bytes, "bytes", "", "byte limit: a number with KiB, MiB, GiB or TiB; 0 removes it; absent: as it is")
	set.Flags().Int64Var(&files, "files", 0, "entry limit: files and directories below DIR; 0 removes it; absent: as it is")
	rm := &cobra.Command{
		Use:   "rm DIR",
		Short: "drop DIR's quota",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return adminCall(cmd, wire.PathAdminQuotaRm, wire.QuotaDirRequest{Dir: args[0]}, nil)
		},
	}
	ls := &cobra.Command{
		Use:   "ls",
		Short: "list the quotas: used, reserved, limit, % of the limit",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var qs []shoal.Quota
			if err := adminCall(cmd, wire.PathAdminQuotas, struct{}{}, &qs); err != nil {
				return err
			}
			if asJSON, _ := cmd.Flags().GetBool("json"); asJSON {
				return writeJSON(cmd.OutOrStdout(), qs)
			}
			return printQuotas(cmd.OutOrStdout(), qs)
		},
	}
	quota.AddCommand(set, rm, ls)
	return quota
}

// printQuotas writes one line per quota. % is of the byte limit (used
// and reserved together), else of the entry limit.
func printQuotas(w io.Writer, qs []shoal.Quota) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "DIR\tUSED\tRESERVED\tLIMIT\t%\tENTRIES\tENTRY LIMIT")
	for _, q := range qs {
		limit, pct := "-", "-"
		if q.Bytes > 0 {
			limit = humanBytes(q.Bytes)
			pct = fmt.Sprintf("%.0f%%", 100*float64(q.UsedBytes+q.Reserved)/float64(q.Bytes))
		}
		flimit := "-"
		if q.Files > 0 {
			flimit = fmt.Sprint(q.Files)
			if q.Bytes == 0 {
				pct = fmt.Sprintf("%.0f%%", 100*float64(q.UsedFiles)/float64(q.Files))
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", q.Dir, humanBytes(q.UsedBytes), humanBytes(q.Reserved), limit, pct, q.UsedFiles, flimit)
	}
	return tw.Flush()
}
