package jobs

import (
	"context"
	"fmt"
	"time"

	"shoal"
	"shoal/wire"
)

// scrubState is what a scrub taken over resumes from: the files up to
// Cursor are read, with what they gave.
type scrubState struct {
	Cursor string           `json:"cursor"`
	Report wire.ScrubReport `json:"report"`
}

// Scrub reads every replica (checked against its adler32) and every EC
// file (ec's Verify: each chunk's crc32c, the parity, the user sums) at
// most rateMBps megabytes per second (0: unbounded), and reports what is
// missing, unreachable or corrupt. tr (may be nil) follows it file by file
// and checkpoints where it is, so that a scrub taken over goes on after
// the last file read.
func Scrub(ctx context.Context, env Env, rateMBps float64, tr *Tracker) (wire.ScrubReport, error) {
	env = env.withDefaults()
	if tr == nil {
		tr = NewTracker("scrub") // it counts the bytes read
	}
	var st scrubState
	tr.Resume(&st)
	rep := st.Report
	rep.RateMBps = rateMBps
	if rep.Problems == nil {
		rep.Problems = []wire.ProblemReplica{}
	}
	lim := newRateLimit(rateMBps * 1e6)
	paths, err := opFiles(ctx, env, "", tr)
	if err != nil {
		return rep, err
	}
	servers, err := serverInfo(ctx, env)
	if err != nil {
		return rep, err
	}
	wrap := func(b shoal.BlobStore) shoal.BlobStore {
		return limitedStore{BlobStore: countingStore{b, tr}, lim: lim, ctx: ctx}
	}
	tr.Phase("reading and verifying", "files", int64(len(paths)))
	for _, path := range paths {
		if ctx.Err() != nil {
			break
		}
		if path <= st.Cursor {
			tr.Done(1)
			continue // read before the takeover
		}
		e, err := env.Catalog.Stat(ctx, path)
		if err == nil && !e.IsDir && len(e.Replicas) > 0 {
			var probs []wire.ProblemReplica
			replicas := 0
			if e.Layout.Kind == shoal.LayoutEC {
				probs, replicas = scrubEC(ctx, env, servers, e, wrap), len(e.Replicas)
			} else {
				for _, r := range e.Replicas {
					replicas++
					problem, n := checkReplica(ctx, storeOf(env, servers, r.Server), r, e.Size, lim)
					tr.Read(n)
					if problem != "" {
						probs = append(probs, wire.ProblemReplica{Path: e.Path, Layout: e.Layout.String(),
							Server: r.Server, Object: r.Object, Shard: r.Shard, Problem: problem})
					}
				}
			}
			if ctx.Err() != nil {
				break // stopped midway through the file: what it found is not a finding
			}
			rep.Files++
			rep.Replicas += replicas
			if len(probs) > 0 {
				rep.Bad++
				rep.Problems = append(rep.Problems, probs...)
				tr.Problem(len(probs))
			}
		}
		cp := scrubState{Cursor: path, Report: rep}
		var cut int
		cp.Report.Problems, cut = capProblems(rep.Problems)
		cp.Report.ProblemsOmitted += cut
		cp.Report.BytesRead = tr.Snapshot().Bytes
		tr.Checkpoint(&cp, false)
		tr.Done(1) // once its copies are read: 100 % is the end, not the last file begun
	}
	rep.BytesRead = tr.Snapshot().Bytes
	rep.Elapsed = tr.Elapsed().Round(time.Millisecond).String()
	return rep, ctx.Err()
}

func scrubEC(ctx context.Context, env Env, servers map[string]shoal.Server, e *shoal.Entry, wrap func(shoal.BlobStore) shoal.BlobStore) []wire.ProblemReplica {
	st, ids, object, err := ecStore(env, servers, e, wrap)
	if err != nil {
		return []wire.ProblemReplica{{Path: e.Path, Layout: e.Layout.String(), Shard: -1, Problem: shoal.Reason(err)}}
	}
	v, err := st.Verify(ctx, object)
	if v == nil {
		return []wire.ProblemReplica{{Path: e.Path, Layout: e.Layout.String(), Object: object, Shard: -1, Problem: shoal.Reason(err)}}
	}
	var out []wire.ProblemReplica
	for _, i := range v.Bad() {
		sr := v.Shards[i]
		p := wire.ProblemReplica{Path: e.Path, Layout: e.Layout.String(), Server: ids[i], Object: object, Shard: i, Problem: sr.State.String()}
		if sr.BadChunks > 0 {
			p.Problem += fmt.Sprintf(": %d chunks fail their crc", sr.BadChunks)
		} else if sr.Err != "" {
			p.Problem += ": " + sr.Err
		}
		out = append(out, p)
	}
	if len(out) == 0 && !v.Healthy() {
		out = append(out, wire.ProblemReplica{Path: e.Path, Layout: e.Layout.String(), Object: object, Shard: -1,
			Problem: fmt.Sprintf("lost %d stripes, %d inconsistent, sums ok %v", v.Lost, v.Inconsistent, v.SumsOK)})
	}
	return out
}

// countingStore counts the bytes read from its objects.
type countingStore struct {
	shoal.BlobStore
	tr *Tracker
}

func (c countingStore) Open(ctx context.Context, id string) (shoal.Object, error) {
	o, err := c.BlobStore.Open(ctx, id)
	if err != nil {
		return nil, err
	}
	return countingObject{o, c.tr}, nil
}

type countingObject struct {
	shoal.Object
	tr *Tracker
}

func (o countingObject) ReadAt(p []byte, off int64) (int, error) {
	n, err := o.Object.ReadAt(p, off)
	o.tr.Read(int64(n))
	return n, err
}
