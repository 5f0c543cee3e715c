package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"shoal"
	"shoal/wire"
)

// newPoolCommands are the admin subcommands for pools and the operations
// that keep data safe (repair, drain, scrub). The operations run inside
// md; the command streams their progress to stderr and prints md's summary.
func newPoolCommands() []*cobra.Command {
	pool := &cobra.Command{Use: "pool add NAME LAYOUT | pool set DIR NAME", Short: "create pools and map directories to them"}
	pool.AddCommand(
		&cobra.Command{
			Use:   "add NAME LAYOUT",
			Short: "create a pool (or change its layout for new files): LAYOUT is replica:N or ec:K+M",
			Args:  cobra.ExactArgs(2),
			RunE: func(cmd *cobra.Command, args []string) error {
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
	repair := &cobra.Command{
		Use:   "repair",
		Short: "read every file, rebuild missing/corrupt/unreachable replicas and shards (exit 1 if some stay degraded)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var rep wire.RepairReport
			if err := adminOp(cmd, wire.PathAdminRepair, struct{}{}, &rep); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if asJSON, _ := cmd.Flags().GetBool("json"); asJSON {
				writeJSON(w, rep)
			} else {
				fmt.Fprintf(w, "files %d  healthy %d  repaired %d  failed %d  (%s)\n", rep.Files, rep.Healthy, rep.Repaired, rep.Failed, rep.Elapsed)
				printProblems(w, rep.Problems)
			}
			if rep.Failed > 0 {
				return &exitError{code: 1, err: fmt.Errorf("repair: %d files still degraded", rep.Failed)}
			}
			return nil
		},
	}
	drain := &cobra.Command{
		Use:   "drain SERVER",
		Short: "move every replica and shard off SERVER while the system stays online, then mark it retired",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var rep wire.DrainReport
			if err := adminOp(cmd, wire.PathAdminDrain, wire.DrainRequest{Server: args[0]}, &rep); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if asJSON, _ := cmd.Flags().GetBool("json"); asJSON {
				writeJSON(w, rep)
			} else {
				fmt.Fprintf(w, "server %s  moved %d  left %d  passes %d  state %s  (%s)\n", rep.Server, rep.Moved, rep.Left, rep.Passes, rep.State, rep.Elapsed)
				printProblems(w, rep.Problems)
			}
			if rep.State != string(shoal.ServerRetired) {
				return &exitError{code: 1, err: fmt.Errorf("drain: %s still holds %d files", rep.Server, rep.Left)}
			}
			return nil
		},
	}
	scrub := &cobra.Command{
		Use:   "scrub [--rate MB/s]",
		Short: "read every replica and shard and verify its checksums at a bounded rate (exit 1 if problems)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rate, _ := cmd.Flags().GetFloat64("rate")
			var rep wire.ScrubReport
			if err := adminOp(cmd, wire.PathAdminScrub, wire.ScrubRequest{RateMBps: rate}, &rep); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if asJSON, _ := cmd.Flags().GetBool("json"); asJSON {
				writeJSON(w, rep)
			} else {
				fmt.Fprintf(w, "files %d  replicas/shards %d  read %s  bad files %d  (%s)\n", rep.Files, rep.Replicas, humanBytes(rep.BytesRead), rep.Bad, rep.Elapsed)
				printProblems(w, rep.Problems)
			}
			if rep.Bad > 0 {
				return &exitError{code: 1, err: fmt.Errorf("scrub: %d files with problems (run shoal admin repair)", rep.Bad)}
			}
			return nil
		},
	}
	scrub.Flags().Float64("rate", 50, "read at most this many MB/s (0: unbounded)")
	return []*cobra.Command{pool, pools, repair, drain, scrub}
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

// adminOp runs a long operation in md, streaming its progress to stderr
// (unless --quiet). Interrupting the command stops the operation in md.
func adminOp(cmd *cobra.Command, path string, req, reply any) error {
	cl, err := adminClient(cmd)
	if err != nil {
		return err
	}
	quiet, _ := cmd.Flags().GetBool("quiet")
	p := newProgress(quiet)
	err = cl.Stream(cmd.Context(), path, req, p.line, reply)
	p.end()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func printProblems(w io.Writer, ps []wire.ProblemReplica) {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	for _, p := range ps {
		fmt.Fprintf(tw, "%s\t%s\t%s\tshard %d\t%s\t%s\n", p.Path, p.Layout, p.Server, p.Shard, p.Problem, p.Action)
	}
	tw.Flush()
}
