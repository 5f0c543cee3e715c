package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"shoal"
	"shoal/wire"
)

// newJobCommands are the admin operations (each starts a job in the
// catalog, which a runner beside some md runs, and follows it) and the
// commands that list, show, follow and cancel jobs.
func newJobCommands() []*cobra.Command {
	none := func(*cobra.Command, []string) (json.RawMessage, error) { return nil, nil }
	fsck := jobCommand("fsck", "compare the catalog with every data server's disks (exit 0 clean, 1 problems found, 2 could not run)",
		wire.JobFsck, cobra.NoArgs, none)
	repair := jobCommand("repair", "read every file, rebuild missing/corrupt/unreachable replicas and shards (exit 0 all healthy, 1 some stay degraded, 2 could not run)",
		wire.JobRepair, cobra.NoArgs, none)
	drain := jobCommand("drain SERVER", "move every replica and shard off SERVER while the system stays online, then mark it retired (exit 0 retired, 1 files left, 2 could not run)",
		wire.JobDrain, cobra.ExactArgs(1), func(_ *cobra.Command, args []string) (json.RawMessage, error) {
			return json.Marshal(wire.DrainRequest{Server: args[0]})
		})
	scrub := jobCommand("scrub [--rate MB/s]", "read every replica and shard and verify its checksums at a bounded rate (exit 0 clean, 1 problems found, 2 could not run)",
		wire.JobScrub, cobra.NoArgs, func(cmd *cobra.Command, _ []string) (json.RawMessage, error) {
			rate, _ := cmd.Flags().GetFloat64("rate")
			return json.Marshal(wire.ScrubRequest{RateMBps: rate})
		})
	scrub.Flags().Float64("rate", 50, "read at most this many MB/s (0: unbounded)")

	list := &cobra.Command{
		Use:   "jobs [--limit N]",
		Short: "list the admin jobs, newest first, as any md sees them",
		Args:  cobra.NoArgs,
		RunE:  runJobs,
	}
	list.Flags().Int("limit", 50, "list at most this many")
	job := &cobra.Command{Use: "job show|follow|cancel ID", Short: "show, follow or cancel one admin job"}
	job.AddCommand(
		&cobra.Command{Use: "show ID", Short: "show a job: state, runner, progress, and its report once finished", Args: cobra.ExactArgs(1), RunE: runJobShow},
		badInputNotRun(&cobra.Command{Use: "follow ID", Short: "stream a job's progress, then print its report and exit as the command that started it would", Args: cobra.ExactArgs(1), RunE: runJobFollow}),
		&cobra.Command{Use: "cancel ID", Short: "cancel a queued or running job (its runner stops within a heartbeat)", Args: cobra.ExactArgs(1), RunE: runJobCancel},
	)
	return []*cobra.Command{fsck, repair, drain, scrub, list, job}
}

// jobCommand is an operation: it starts a job of kind with the arguments
// argsOf makes, then follows it (or, with --detach, prints its id).
func jobCommand(use, short, kind string, args cobra.PositionalArgs, argsOf func(*cobra.Command, []string) (json.RawMessage, error)) *cobra.Command {
	c := &cobra.Command{Use: use + " [--detach]", Short: short, Args: args, RunE: func(cmd *cobra.Command, a []string) error {
		raw, err := argsOf(cmd, a)
		if err != nil {
			return notRun(err)
		}
		return runJob(cmd, kind, raw)
	}}
	c.Flags().Bool("detach", false, "start the job and print its id at once (then: shoal admin job follow|show|cancel ID)")
	return badInputNotRun(c)
}

// badInputNotRun makes cmd's bad arguments and flags exit jobNotRun, as
// its other failures to run do (cobra's own errors exit 1).
func badInputNotRun(cmd *cobra.Command) *cobra.Command {
	args := cmd.Args
	cmd.Args = func(c *cobra.Command, a []string) error {
		if args == nil {
			return nil
		}
		if err := args(c, a); err != nil {
			return notRun(err)
		}
		return nil
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return notRun(err) })
	return cmd
}

func runJob(cmd *cobra.Command, kind string, args json.RawMessage) error {
	cl, err := adminClient(cmd)
	if err != nil {
		return notRun(err)
	}
	var j shoal.Job
	if _, err := cl.Call(wire.PathAdminJobCreate, wire.JobRequest{Kind: kind, Args: args}, &j); err != nil {
		return notRun(fmt.Errorf("%s: %w", kind, err))
	}
	if detach, _ := cmd.Flags().GetBool("detach"); detach {
		fmt.Fprintln(cmd.OutOrStdout(), j.ID)
		return nil
	}
	if quiet, _ := cmd.Flags().GetBool("quiet"); !quiet {
		fmt.Fprintf(cmd.ErrOrStderr(), "%s: job %d (interrupting stops following it, not the job: shoal admin job cancel %d)\n", kind, j.ID, j.ID)
	}
	return followJob(cmd, j.ID, kind)
}

// followJob streams job id's progress to stderr (unless --quiet), then
// prints its report and returns the exit it calls for.
func followJob(cmd *cobra.Command, id int64, kind string) error {
	cl, err := adminClient(cmd)
	if err != nil {
		return notRun(err)
	}
	quiet, _ := cmd.Flags().GetBool("quiet")
	p := newProgress(quiet)
	var raw json.RawMessage
	err = cl.Stream(cmd.Context(), wire.PathAdminJobFollow, wire.JobID{ID: id}, p.line, &raw)
	p.end()
	if err != nil {
		if cmd.Context().Err() != nil {
			return notRun(fmt.Errorf("job %d (%s): stopped following it, and it goes on (shoal admin job follow|cancel %d)", id, kind, id))
		}
		err = fmt.Errorf("job %d (%s): %w", id, kind, err)
		// A cancelled job ran, and what it was to check or mend may not
		// be: 1, as for problems left. Asked of md rather than read from
		// the error's kind, which a failed job's error may share.
		var j shoal.Job
		if _, jerr := cl.Call(wire.PathAdminJob, wire.JobID{ID: id}, &j); jerr == nil && j.State == shoal.JobCancelled {
			return &exitError{code: jobProblems, err: err}
		}
		return notRun(err)
	}
	asJSON, _ := cmd.Flags().GetBool("json")
	return printReport(cmd.OutOrStdout(), kind, raw, asJSON)
}

// notRun is the exit of a job command that could not run (md
// unreachable, auth refused, bad input, the job failed) or gave no
// report.
func notRun(err error) error {
	return &exitError{code: jobNotRun, err: err}
}

func jobID(arg string) (int64, error) {
	id, err := strconv.ParseInt(arg, 10, 64)
	if err != nil || id <= 0 {
		return 0, fmt.Errorf("job id %q: want a positive number (see shoal admin jobs)", arg)
	}
	return id, nil
}

// getJob fetches job arg (an id) through md.
func getJob(cmd *cobra.Command, path, arg string) (*shoal.Job, error) {
	id, err := jobID(arg)
	if err != nil {
		return nil, err
	}
	cl, err := adminClient(cmd)
	if err != nil {
		return nil, err
	}
	var j shoal.Job
	if _, err := cl.Call(path, wire.JobID{ID: id}, &j); err != nil {
		return nil, fmt.Errorf("job %d: %w", id, err)
	}
	return &j, nil
}

func runJobs(cmd *cobra.Command, _ []string) error {
	limit, _ := cmd.Flags().GetInt("limit")
	if limit < 1 {
		return fmt.Errorf("--limit %d: want at least 1", limit)
	}
	cl, err := adminClient(cmd)
	if err != nil {
		return err
	}
	var js []shoal.Job
	if _, err := cl.Call(wire.PathAdminJobs, wire.JobsRequest{Limit: limit}, &js); err != nil {
		return fmt.Errorf("jobs: %w", err)
	}
	if asJSON, _ := cmd.Flags().GetBool("json"); asJSON {
		return writeJSON(cmd.OutOrStdout(), js)
	}
	tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tARGS\tSTATE\tRUNS\tOWNER\tUPDATED\tPROGRESS")
	now := time.Now()
	for _, j := range js {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\t%s ago\t%s\n", j.ID, j.Kind, argsText(j.Args), j.State, j.Runs, orDash(j.Owner),
			now.Sub(j.Updated).Round(time.Second), progressText(j.Progress))
	}
	return tw.Flush()
}

func runJobShow(cmd *cobra.Command, args []string) error {
	j, err := getJob(cmd, wire.PathAdminJob, args[0])
	if err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	if asJSON, _ := cmd.Flags().GetBool("json"); asJSON {
		return writeJSON(w, j)
	}
	now := time.Now()
	fmt.Fprintf(w, "job %d  %s %s  %s  runs %d  owner %s\n", j.ID, j.Kind, argsText(j.Args), j.State, j.Runs, orDash(j.Owner))
	fmt.Fprintf(w, "created %s  updated %s ago", j.Created.Format(time.RFC3339), now.Sub(j.Updated).Round(time.Second))
	if j.State == shoal.JobRunning {
		fmt.Fprintf(w, "  heartbeat %s ago  lease %s", now.Sub(j.Heartbeat).Round(time.Second), leaseText(j.LeaseUntil, now))
	}
	fmt.Fprintln(w)
	if p := progressText(j.Progress); p != "-" {
		fmt.Fprintln(w, "progress:", p)
	}
	if j.Error != "" {
		fmt.Fprintln(w, "error:", j.Error)
	}
	if j.Result != nil {
		printReport(w, j.Kind, j.Result, false) // the findings are shown; the exit is follow's
	}
	return nil
}

func runJobFollow(cmd *cobra.Command, args []string) error {
	j, err := getJob(cmd, wire.PathAdminJob, args[0])
	if err != nil {
		return notRun(err)
	}
	return followJob(cmd, j.ID, j.Kind)
}

func runJobCancel(cmd *cobra.Command, args []string) error {
	j, err := getJob(cmd, wire.PathAdminJobCancel, args[0])
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "job %d (%s): %s\n", j.ID, j.Kind, j.State)
	return nil
}

// progressText is a recorded progress in one line, or "-".
func progressText(raw json.RawMessage) string {
	var p wire.Progress
	if len(raw) == 0 || json.Unmarshal(raw, &p) != nil || p.Op == "" {
		return "-"
	}
	return formatProgress(p)
}

func argsText(raw json.RawMessage) string {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" || s == "{}" {
		return "-"
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func leaseText(until, now time.Time) string {
	if until.Before(now) {
		return fmt.Sprintf("lapsed %s ago (another md takes it over)", now.Sub(until).Round(time.Second))
	}
	return fmt.Sprintf("%s left", until.Sub(now).Round(time.Second))
}
