package jobs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"shoal"
	"shoal/ec"
	"shoal/wire"
)

// drainState is what a drain taken over carries on with: it starts its
// passes again (moving what is left is naturally idempotent), counting on
// from where the last run was.
type drainState struct {
	Moved, Passes, Retried int
}

// drainIdle is the pause between passes while only uploads begun before
// the drain are still pending on the server.
const drainIdle = 200 * time.Millisecond

// drainCheckpoint is what a takeover counts on from: the pass under way
// is done again.
func drainCheckpoint(rep *wire.DrainReport) drainState {
	return drainState{Moved: rep.Moved, Passes: rep.Passes - 1, Retried: rep.Retried}
}

// drainStalledPasses is how many passes in a row may move nothing before
// Drain gives up and reports.
const drainStalledPasses = 5

// drainSettle is the margin past Env.PlacementStale after which no md
// can still place a new upload on a server marked draining.
const drainSettle = 500 * time.Millisecond

// Drain marks the server draining (no new writes; reads go on), moves
// every replica and shard on it to other live servers of its pool (each
// move a copy, then the catalog row changes atomically and the old object
// goes to the garbage queue after the URL grace, so reads in flight finish)
// and, once nothing is left (uploads begun before the drain included),
// marks it retired. The server's garbage loop then empties its disks. tr
// (may be nil) follows it pass by pass.
func Drain(ctx context.Context, env Env, id string, tr *Tracker) (wire.DrainReport, error) {
	env = env.withDefaults()
	var st drainState
	tr.Resume(&st)
	rep := wire.DrainReport{Server: id, Problems: []wire.ProblemReplica{}, State: string(shoal.ServerDraining),
		Moved: st.Moved, Passes: st.Passes, Retried: st.Retried}
	servers, err := serverInfo(ctx, env)
	if err != nil {
		return rep, err
	}
	sv, ok := servers[id]
	if !ok {
		return rep, shoal.Errorf("jobs.drain", shoal.KindNotFound, "no server %q", id)
	}
	if sv.Pool == shoal.GatewayPool {
		return rep, shoal.Errorf("jobs.drain", shoal.KindInvalid, "%s is a gw: it holds no data", id)
	}
	if sv.State != shoal.ServerRetired {
		if err := env.Catalog.SetServerState(ctx, id, shoal.ServerDraining); err != nil {
			return rep, err
		}
	}
	marked := time.Now()
	stalled := 0
	for ctx.Err() == nil {
		rep.Passes++
		tr.Phase(fmt.Sprintf("pass %d: listing what %s holds", rep.Passes, id), "replicas", 0)
		tr.Checkpoint(drainCheckpoint(&rep), true)
		servers, err := serverInfo(ctx, env)
		if err != nil {
			return rep, err
		}
		rows, pending := 0, 0
		var paths []string
		seen := map[string]bool{}
		err = env.Catalog.WalkReplicas(ctx, id, func(path string, _ shoal.Replica) error {
			if path == "" {
				pending++
			} else if !seen[path] {
				seen[path] = true
				rows++
				paths = append(paths, path)
			}
			tr.Done(1)
			return nil
		})
		if err != nil {
			return rep, err
		}
		rep.Left = rows
		if rows == 0 && pending == 0 {
			// Other md replicas learn of the draining state only when their
			// placement lists refresh: until then they may still begin
			// uploads on this server, which must be waited for, not missed.
			tr.Phase("waiting for every md to stop placing uploads on "+id, "", 0)
			if wait := env.PlacementStale + drainSettle - time.Since(marked); wait > 0 {
				sleep(ctx, wait)
				continue
			}
			if err := env.Catalog.SetServerState(ctx, id, shoal.ServerRetired); err != nil {
				return rep, err
			}
			rep.State = string(shoal.ServerRetired)
			tr.Problem(-len(rep.Problems))
			rep.Problems = rep.Problems[:0] // a later pass did what earlier ones could not
			break
		}
		if rows == 0 {
			tr.Phase(fmt.Sprintf("waiting for %d uploads begun before the drain", pending), "", 0)
			sleep(ctx, drainIdle) // uploads begun before the drain: wait for their commit or expiry
			continue
		}
		// A failed move (a target briefly not live, a file overwritten
		// meanwhile) is tried again next pass; only the last pass's
		// failures are reported as problems.
		rep.Retried += len(rep.Problems)
		tr.Phase(fmt.Sprintf("pass %d: moving files off %s", rep.Passes, id), "files", int64(len(paths)))
		tr.Problem(-len(rep.Problems)) // progress counts this pass's failures, as the report does
		rep.Problems = rep.Problems[:0]
		for _, path := range paths {
			if ctx.Err() != nil {
				break
			}
			tr.Done(1)
			e, err := env.Catalog.Stat(ctx, path)
			if err != nil || e.IsDir {
				continue
			}
			for _, r := range e.Replicas {
				if r.Server != id {
					continue
				}
				if err := moveOff(ctx, env, servers, e, r); err != nil {
					rep.Problems = append(rep.Problems, wire.ProblemReplica{Path: e.Path, Layout: e.Layout.String(), Server: id,
						Object: r.Object, Shard: r.Shard, Problem: "move failed", Action: shoal.Reason(err)})
					tr.Problem(1)
					continue
				}
				rep.Moved++
				tr.Checkpoint(drainCheckpoint(&rep), false)
			}
		}
		if len(rep.Problems) > 0 && len(rep.Problems) >= rows {
			// No progress this pass. Servers that briefly missed a
			// heartbeat come back: retry a few times, then report rather
			// than spin.
			if stalled++; stalled >= drainStalledPasses {
				break
			}
			sleep(ctx, drainIdle)
			continue
		}
		stalled = 0
	}
	rep.Elapsed = tr.Elapsed().Round(time.Millisecond).String()
	return rep, ctx.Err()
}

// moveOff moves replica r of e (on a draining server) to another server:
// a raw copy of the object from the draining server, or, if it cannot be
// read, from another replica (replica layouts) or rebuilt from the other
// shards (EC).
func moveOff(ctx context.Context, env Env, servers map[string]shoal.Server, e *shoal.Entry, r shoal.Replica) error {
	target := pickTarget(env, servers, poolOf(servers, e), e, nil)
	if target == "" {
		return shoal.Errorf("jobs.drain", shoal.KindInsufficient, "no live active server of pool %s holds nothing of %s", poolOf(servers, e), e.Path)
	}
	err := moveReplica(ctx, env, servers, e.Path, storeOf(env, servers, r.Server), r, target)
	if err == nil || rowGone(err) {
		return nil // moved, or the file changed meanwhile: the next pass sees what is there now
	}
	if e.Layout.Kind != shoal.LayoutEC {
		for _, o := range e.Replicas {
			if o.Server == r.Server {
				continue
			}
			if err = moveReplica(ctx, env, servers, e.Path, storeOf(env, servers, o.Server), r, target); err == nil {
				return nil
			}
		}
		return err
	}
	st, _, object, err := ecStore(env, servers, e, nil)
	if err != nil {
		return err
	}
	dst := storeOf(env, servers, target)
	rr, err := ec.Repair(ctx, st, object, map[int]shoal.BlobStore{r.Shard: dst})
	if err != nil {
		return err
	}
	for _, rb := range rr.Rebuilt {
		if rb.Index == r.Shard && !rb.InPlace {
			nw := shoal.Replica{Server: target, Object: object, Shard: r.Shard, Size: rb.Size, Sum: rb.Adler32}
			if err := replaceReplica(ctx, env, e.Path, r, nw); err != nil {
				dst.Remove(context.WithoutCancel(ctx), object)
				return err
			}
			return nil
		}
	}
	return shoal.Errorf("jobs.drain", shoal.KindUnavailable, "shard %d of %s could not be rebuilt", r.Shard, e.Path)
}

// rowGone reports a ReplaceReplica that found the file or its replica
// row gone (overwritten or removed while being moved).
func rowGone(err error) bool {
	var se *shoal.Error
	return errors.As(err, &se) && strings.HasSuffix(se.Op, "ReplaceReplica") && se.Kind == shoal.KindNotFound
}
