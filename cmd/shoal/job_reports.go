package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"shoal"
	"shoal/wire"
)

// Exit codes of the admin job commands (fsck, repair, drain, scrub and
// job follow): a script tells "it ran and the data is not right" from
// "it did not run" (md unreachable, auth refused, bad input, the job
// failed) and retries only the second.
const (
	jobClean    = 0 // ran; nothing wrong, or all mended
	jobProblems = 1 // ran and found or left problems (fsck's findings, files still degraded, a server not drained, a cancel)
	jobNotRun   = 2 // could not run, or gave no report
)

// printReport prints the report of a job of kind (the summary, or the
// JSON with asJSON) and returns the exit its findings call for: an
// *exitError when some data stays degraded, nil when all is well.
func printReport(w io.Writer, kind string, raw json.RawMessage, asJSON bool) error {
	fail := func(code int, format string, args ...any) error {
		return &exitError{code: code, err: fmt.Errorf(format, args...)}
	}
	switch kind {
	case wire.JobFsck:
		var rep wire.FsckReport
		if err := json.Unmarshal(raw, &rep); err != nil {
			return fail(jobNotRun, "fsck: %v", err)
		}
		if err := printFsck(w, &rep, asJSON); err != nil {
			return fail(jobNotRun, "%v", err)
		}
		if !rep.OK {
			return &exitError{code: jobProblems}
		}
	case wire.JobRepair:
		var rep wire.RepairReport
		if err := json.Unmarshal(raw, &rep); err != nil {
			return fail(jobNotRun, "%s: %v", kind, err)
		}
		if asJSON {
			writeJSON(w, rep)
		} else {
			fmt.Fprintf(w, "files %d  healthy %d  repaired %d  failed %d  (%s)\n", rep.Files, rep.Healthy, rep.Repaired, rep.Failed, rep.Elapsed)
			printProblems(w, rep.Problems, rep.ProblemsOmitted)
		}
		if rep.Failed > 0 {
			return fail(jobProblems, "repair: %d files still degraded", rep.Failed)
		}
	case wire.JobDrain:
		var rep wire.DrainReport
		if err := json.Unmarshal(raw, &rep); err != nil {
			return fail(jobNotRun, "%s: %v", kind, err)
		}
		if asJSON {
			writeJSON(w, rep)
		} else {
			fmt.Fprintf(w, "server %s  moved %d  left %d  passes %d  state %s  (%s)\n", rep.Server, rep.Moved, rep.Left, rep.Passes, rep.State, rep.Elapsed)
			printProblems(w, rep.Problems, 0)
		}
		if rep.State != string(shoal.ServerRetired) {
			// It stays draining, taking no new writes: say how to undo
			// that, as a pool no wider than its layout refuses writes meanwhile.
			return fail(jobProblems, "drain: %s still holds %d files and stays %s (no new writes): drain it again, or take it back with shoal admin server activate %s",
				rep.Server, rep.Left, rep.State, rep.Server)
		}
	case wire.JobScrub:
		var rep wire.ScrubReport
		if err := json.Unmarshal(raw, &rep); err != nil {
			return fail(jobNotRun, "%s: %v", kind, err)
		}
		if asJSON {
			writeJSON(w, rep)
		} else {
			fmt.Fprintf(w, "files %d  replicas/shards %d  read %s  bad files %d  (%s)\n", rep.Files, rep.Replicas, humanBytes(rep.BytesRead), rep.Bad, rep.Elapsed)
			printProblems(w, rep.Problems, rep.ProblemsOmitted)
		}
		if rep.Bad > 0 {
			return fail(jobProblems, "scrub: %d files with problems (run shoal admin repair)", rep.Bad)
		}
	default:
		w.Write(append(raw, '\n'))
	}
	return nil
}

func printFsck(w io.Writer, rep *wire.FsckReport, asJSON bool) error {
	if asJSON {
		return writeJSON(w, rep)
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "servers checked\t%d\nreplicas in catalog\t%d\nobjects on disks\t%d\n", rep.Servers, rep.Replicas, rep.Objects)
	fmt.Fprintf(tw, "queued garbage\t%d\norphans\t%d\nmissing\t%d\nunreachable\t%d\n", rep.Garbage, len(rep.Orphans), len(rep.Missing), len(rep.Unreachable))
	for _, o := range rep.Missing {
		fmt.Fprintf(tw, "MISSING\t%s\t%s\t%s\t%s\n", o.Server, o.Object, o.Path, o.Reason)
	}
	for _, o := range rep.Orphans {
		fmt.Fprintf(tw, "ORPHAN\t%s\t%s\t%d bytes\t\n", o.Server, o.Object, o.Size)
	}
	for _, u := range rep.Unreachable {
		fmt.Fprintf(tw, "UNREACHABLE\t%s\t%s\t\t\n", u.Server, u.Error)
	}
	verdict := "clean"
	if !rep.OK {
		verdict = "PROBLEMS FOUND"
	}
	fmt.Fprintf(tw, "fsck\t%s\n", verdict)
	return tw.Flush()
}

func printProblems(w io.Writer, ps []wire.ProblemReplica, omitted int) {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	for _, p := range ps {
		fmt.Fprintf(tw, "%s\t%s\t%s\tshard %d\t%s\t%s\n", p.Path, p.Layout, p.Server, p.Shard, p.Problem, p.Action)
	}
	if omitted > 0 {
		fmt.Fprintf(tw, "… and %d more found before the job was taken over\t\t\t\t\t\n", omitted)
	}
	tw.Flush()
}
