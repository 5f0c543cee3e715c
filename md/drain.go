package md

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

// drainIdle is the pause between passes while only uploads begun before
// the drain are still pending on the server.
const drainIdle = 200 * time.Millisecond

// drainStalledPasses is how many passes in a row may move nothing before
// Drain gives up and reports.
const drainStalledPasses = 5

// drainSettle is the margin past placementRefresh after which no md can
// still place a new upload on a server marked draining.
const drainSettle = 500 * time.Millisecond

// Drain marks the server draining (no new writes; reads go on), moves
// every replica and shard on it to other live servers of its pool (each
// move a copy, then the catalog row changes atomically and the old object
// goes to the garbage queue after the URL grace, so reads in flight finish)
// and, once nothing is left (uploads begun before the drain included),
// marks it retired. The server's garbage loop then empties its disks. tr
// (may be nil) follows it pass by pass.
func (s *Server) Drain(ctx context.Context, id string, tr *Tracker) (wire.DrainReport, error) {
	start := time.Now()
	rep := wire.DrainReport{Server: id, Problems: []wire.ProblemReplica{}, State: string(shoal.ServerDraining)}
	servers, err := s.serverInfo(ctx)
	if err != nil {
		return rep, err
	}
	sv, ok := servers[id]
	if !ok {
		return rep, shoal.Errorf("md.drain", shoal.KindNotFound, "no server %q", id)
	}
	if sv.Pool == shoal.GatewayPool {
		return rep, shoal.Errorf("md.drain", shoal.KindInvalid, "%s is a gw: it holds no data", id)
	}
	if sv.State != shoal.ServerRetired {
		if err := s.cat.SetServerState(ctx, id, shoal.ServerDraining); err != nil {
			return rep, err
		}
	}
	s.placement.invalidate()
	marked := time.Now()
	stalled := 0
	for ctx.Err() == nil {
		rep.Passes++
		tr.Phase(fmt.Sprintf("pass %d: listing what %s holds", rep.Passes, id), "replicas", 0)
		servers, err := s.serverInfo(ctx)
		if err != nil {
			return rep, err
		}
		rows, pending := 0, 0
		var paths []string
		seen := map[string]bool{}
		err = s.cat.WalkReplicas(ctx, id, func(path string, _ shoal.Replica) error {
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
			if wait := placementRefresh + drainSettle - time.Since(marked); wait > 0 {
				sleep(ctx, wait)
				continue
			}
			if err := s.cat.SetServerState(ctx, id, shoal.ServerRetired); err != nil {
				return rep, err
			}
			s.placement.invalidate()
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
			e, err := s.cat.Stat(ctx, path)
			if err != nil || e.IsDir {
				continue
			}
			for _, r := range e.Replicas {
				if r.Server != id {
					continue
				}
				if err := s.moveOff(ctx, servers, e, r); err != nil {
					rep.Problems = append(rep.Problems, wire.ProblemReplica{Path: e.Path, Layout: e.Layout.String(), Server: id,
						Object: r.Object, Shard: r.Shard, Problem: "move failed", Action: shoal.Reason(err)})
					tr.Problem(1)
					continue
				}
				rep.Moved++
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
	rep.Elapsed = time.Since(start).Round(time.Millisecond).String()
	return rep, ctx.Err()
}

// moveOff moves replica r of e (on a draining server) to another server:
// a raw copy of the object from the draining server, or, if it cannot be
// read, from another replica (replica layouts) or rebuilt from the other
// shards (EC).
func (s *Server) moveOff(ctx context.Context, servers map[string]shoal.Server, e *shoal.Entry, r shoal.Replica) error {
	target := s.pickTarget(servers, poolOf(servers, e), e, nil)
	if target == "" {
		return shoal.Errorf("md.drain", shoal.KindInsufficient, "no live active server of pool %s holds nothing of %s", poolOf(servers, e), e.Path)
	}
	err := s.moveReplica(ctx, servers, e.Path, s.storeOf(servers, r.Server), r, target)
	if err == nil || rowGone(err) {
		return nil // moved, or the file changed meanwhile: the next pass sees what is there now
	}
	if e.Layout.Kind != shoal.LayoutEC {
		for _, o := range e.Replicas {
			if o.Server == r.Server {
				continue
			}
			if err = s.moveReplica(ctx, servers, e.Path, s.storeOf(servers, o.Server), r, target); err == nil {
				return nil
			}
		}
		return err
	}
	st, _, object, err := s.ecStore(servers, e, nil)
	if err != nil {
		return err
	}
	dst := s.storeOf(servers, target)
	rr, err := ec.Repair(ctx, st, object, map[int]shoal.BlobStore{r.Shard: dst})
	if err != nil {
		return err
	}
	for _, rb := range rr.Rebuilt {
		if rb.Index == r.Shard && !rb.InPlace {
			nw := shoal.Replica{Server: target, Object: object, Shard: r.Shard, Size: rb.Size, Sum: rb.Adler32}
			if err := s.replaceReplica(ctx, e.Path, r, nw); err != nil {
				dst.Remove(context.WithoutCancel(ctx), object)
				return err
			}
			return nil
		}
	}
	return shoal.Errorf("md.drain", shoal.KindUnavailable, "shard %d of %s could not be rebuilt", r.Shard, e.Path)
}

// rowGone reports a ReplaceReplica that found the file or its replica
// row gone (overwritten or removed while being moved).
func rowGone(err error) bool {
	var se *shoal.Error
	return errors.As(err, &se) && strings.HasSuffix(se.Op, "ReplaceReplica") && se.Kind == shoal.KindNotFound
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
