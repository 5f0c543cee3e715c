package jobs

import (
	"context"
	"fmt"
	"time"

	"shoal"
	"shoal/ec"
	"shoal/wire"
)

// repairState is what a repair taken over resumes from: the files up to
// Cursor (in opFiles order) are done, with what they gave.
type repairState struct {
	Cursor string            `json:"cursor"`
	Report wire.RepairReport `json:"report"`
}

// Repair checks every file (each replica read whole against its adler32;
// each EC file with ec's Verify) and rebuilds what is missing, corrupt or
// unreachable: onto another live server of the pool when the old one is
// unreachable or not active (the catalog row moves there atomically and
// the old object goes to the garbage queue), in place otherwise. tr (may
// be nil) follows it file by file and checkpoints where it is, so that a
// repair taken over goes on after the last file done.
func Repair(ctx context.Context, env Env, tr *Tracker) (wire.RepairReport, error) {
	env = env.withDefaults()
	var st repairState
	tr.Resume(&st)
	rep := st.Report
	if rep.Problems == nil {
		rep.Problems = []wire.ProblemReplica{}
	}
	paths, err := opFiles(ctx, env, "", tr)
	if err != nil {
		return rep, err
	}
	servers, err := serverInfo(ctx, env)
	if err != nil {
		return rep, err
	}
	tr.Phase("checking and repairing", "files", int64(len(paths)))
	for _, path := range paths {
		if ctx.Err() != nil {
			break
		}
		if path <= st.Cursor {
			tr.Done(1)
			continue // done before the takeover
		}
		if e, err := env.Catalog.Stat(ctx, path); err == nil && !e.IsDir && len(e.Replicas) > 0 {
			rep.Files++
			var probs []wire.ProblemReplica
			var ok bool
			if e.Layout.Kind == shoal.LayoutEC {
				probs, ok = repairEC(ctx, env, servers, e)
			} else {
				probs, ok = repairReplicas(ctx, env, servers, e)
			}
			switch {
			case len(probs) == 0:
				rep.Healthy++
			case ok:
				rep.Repaired++
			default:
				rep.Failed++
			}
			rep.Problems = append(rep.Problems, probs...)
			tr.Problem(len(probs))
		} // else gone or changed since the walk
		cp := repairState{Cursor: path, Report: rep}
		var cut int
		cp.Report.Problems, cut = capProblems(rep.Problems)
		cp.Report.ProblemsOmitted += cut
		tr.Checkpoint(&cp, false)
		tr.Done(1) // once its copies are read: 100 % is the end, not the last file begun
	}
	rep.Elapsed = tr.Elapsed().Round(time.Millisecond).String()
	return rep, ctx.Err()
}

// repairReplicas checks each copy and replaces the bad ones from a good
// one. ok is false if a bad copy remains.
func repairReplicas(ctx context.Context, env Env, servers map[string]shoal.Server, e *shoal.Entry) ([]wire.ProblemReplica, bool) {
	var good []shoal.Replica
	var probs []wire.ProblemReplica
	var bad []int
	for _, r := range e.Replicas {
		problem, _ := checkReplica(ctx, storeOf(env, servers, r.Server), r, e.Size, nil)
		if problem == "" {
			good = append(good, r)
			continue
		}
		bad = append(bad, len(probs))
		probs = append(probs, wire.ProblemReplica{Path: e.Path, Layout: e.Layout.String(), Server: r.Server, Object: r.Object, Shard: r.Shard, Problem: problem})
	}
	if len(probs) == 0 {
		return nil, true
	}
	if len(good) == 0 {
		for i := range probs {
			probs[i].Action = "none: no good copy left"
		}
		return probs, false
	}
	ok := true
	src := storeOf(env, servers, good[0].Server)
	avoid := map[string]bool{}
	for _, i := range bad {
		p := &probs[i]
		old := shoal.Replica{Server: p.Server, Object: p.Object, Shard: p.Shard, Size: e.Size, Sum: e.Sums.Adler32}
		for _, r := range e.Replicas {
			if r.Server == p.Server && r.Object == p.Object {
				old = r
			}
		}
		if target := pickTarget(env, servers, poolOf(servers, e), e, avoid); target != "" {
			avoid[target] = true
			if err := moveReplica(ctx, env, servers, e.Path, src, old, target); err != nil {
				p.Action, ok = "failed: "+shoal.Reason(err), false
			} else {
				p.Action = "copied to " + target
			}
			continue
		}
		// No other server: rewrite in place if the old one answers.
		dst := storeOf(env, servers, p.Server)
		if err := dst.Remove(ctx, p.Object); err != nil {
			p.Action, ok = "failed: no other server and "+shoal.Reason(err), false
			continue
		}
		if _, _, err := copyObject(ctx, src, dst, p.Object, old.Sum); err != nil {
			p.Action, ok = "failed: "+shoal.Reason(err), false
			continue
		}
		p.Action = "rewritten in place"
	}
	return probs, ok
}

// moveReplica copies old's object from src to target and points the
// catalog row there; the new copy is removed if the catalog refuses.
func moveReplica(ctx context.Context, env Env, servers map[string]shoal.Server, path string, src shoal.BlobStore, old shoal.Replica, target string) error {
	dst := storeOf(env, servers, target)
	info, sums, err := copyObject(ctx, src, dst, old.Object, old.Sum)
	if err != nil {
		return err
	}
	nw := shoal.Replica{Server: target, Object: old.Object, Shard: old.Shard, Size: info.Size, Sum: sums.Adler32}
	if err := replaceReplica(ctx, env, path, old, nw); err != nil {
		dst.Remove(context.WithoutCancel(ctx), old.Object)
		return err
	}
	return nil
}

func replaceReplica(ctx context.Context, env Env, path string, old, nw shoal.Replica) error {
	return env.Catalog.ReplaceReplica(ctx, path, old, nw, time.Now().Add(env.Grace))
}

// ecStore is ec's Store over an EC file's shard servers, in shard order.
func ecStore(env Env, servers map[string]shoal.Server, e *shoal.Entry, wrap func(shoal.BlobStore) shoal.BlobStore) (*ec.Store, []string, string, error) {
	ids, object, err := e.ShardServers()
	if err != nil {
		return nil, nil, "", err
	}
	stores := make([]shoal.BlobStore, len(ids))
	for i, id := range ids {
		stores[i] = storeOf(env, servers, id)
		if wrap != nil {
			stores[i] = wrap(stores[i])
		}
	}
	st, err := ec.New(ec.Options{K: e.Layout.K, M: e.Layout.M, Shards: stores})
	return st, ids, object, err
}

// repairEC verifies an EC file and rebuilds its bad shards: onto another
// server when the shard's server is unreachable or not active, in place
// otherwise.
func repairEC(ctx context.Context, env Env, servers map[string]shoal.Server, e *shoal.Entry) ([]wire.ProblemReplica, bool) {
	st, ids, object, err := ecStore(env, servers, e, nil)
	if err != nil {
		return []wire.ProblemReplica{{Path: e.Path, Layout: e.Layout.String(), Problem: shoal.Reason(err), Action: "none"}}, false
	}
	v, err := st.Verify(ctx, object)
	if v == nil {
		return []wire.ProblemReplica{{Path: e.Path, Layout: e.Layout.String(), Object: object, Problem: shoal.Reason(err), Action: "none"}}, false
	}
	bad := v.Bad()
	if len(bad) == 0 && v.Healthy() {
		return nil, true
	}
	now := time.Now()
	targets := map[int]shoal.BlobStore{}
	targetID := map[int]string{}
	avoid := map[string]bool{}
	probs := map[int]*wire.ProblemReplica{}
	var out []wire.ProblemReplica
	for _, i := range bad {
		sr := v.Shards[i]
		p := &wire.ProblemReplica{Path: e.Path, Layout: e.Layout.String(), Server: ids[i], Object: object, Shard: i, Problem: sr.State.String()}
		if sr.Err != "" {
			p.Problem += ": " + sr.Err
		}
		probs[i] = p
		if sv, known := servers[ids[i]]; sr.State == ec.ShardUnreachable || !known || !usable(env, sv, now) {
			if t := pickTarget(env, servers, poolOf(servers, e), e, avoid); t != "" {
				avoid[t] = true
				targets[i], targetID[i] = storeOf(env, servers, t), t
			}
		}
	}
	if len(bad) == 0 { // shards all good but the data does not check out
		out = append(out, wire.ProblemReplica{Path: e.Path, Layout: e.Layout.String(), Object: object, Shard: -1,
			Problem: fmt.Sprintf("lost %d stripes, %d inconsistent, sums ok %v", v.Lost, v.Inconsistent, v.SumsOK), Action: "none"})
		return out, false
	}
	rr, err := ec.Repair(ctx, st, object, targets)
	ok := err == nil
	if rr != nil {
		for _, rb := range rr.Rebuilt {
			p := probs[rb.Index]
			if rb.InPlace {
				p.Action = "rebuilt in place"
				continue
			}
			t := targetID[rb.Index]
			old := shoal.Replica{Server: ids[rb.Index], Object: object, Shard: rb.Index}
			nw := shoal.Replica{Server: t, Object: object, Shard: rb.Index, Size: rb.Size, Sum: rb.Adler32}
			if err := replaceReplica(ctx, env, e.Path, old, nw); err != nil {
				targets[rb.Index].Remove(context.WithoutCancel(ctx), object)
				p.Action, ok = "rebuilt on "+t+" but not recorded: "+shoal.Reason(err), false
				continue
			}
			p.Action = "rebuilt on " + t
		}
		for _, sk := range rr.Skipped {
			probs[sk.Index].Action, ok = "skipped: "+sk.Reason, false
		}
	}
	for _, i := range bad {
		p := probs[i]
		if p.Action == "" {
			p.Action, ok = "failed", false
			if err != nil {
				p.Action = "failed: " + shoal.Reason(err)
			}
			if targets[i] == nil {
				// Say why no other server was tried: an operator then knows
				// whether to add a disk or to wait for the server to return.
				p.Action += fmt.Sprintf("; no other usable server in pool %s holds no shard of it (%s needs %d distinct servers)",
					poolOf(servers, e), e.Layout, e.Layout.Width())
			}
		}
		out = append(out, *p)
	}
	return out, ok
}
