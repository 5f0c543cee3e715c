package md

import (
	"context"
	"fmt"
	"time"

	"shoal"
	"shoal/wire"
)

// Scrub reads every replica (checked against its adler32) and every EC
// file (gw's Verify: each chunk's crc32c, the parity, the user sums) at
// most rateMBps megabytes per second (0: unbounded), and reports what is
// missing, unreachable or corrupt. tr (may be nil) follows it file by file.
func (s *Server) Scrub(ctx context.Context, rateMBps float64, tr *Tracker) (wire.ScrubReport, error) {
	start := time.Now()
	if tr == nil {
		tr = NewTracker("scrub") // it counts the bytes read
	}
	rep := wire.ScrubReport{Problems: []wire.ProblemReplica{}, RateMBps: rateMBps}
	lim := newRateLimit(rateMBps * 1e6)
	paths, err := s.opFiles(ctx, "", tr)
	if err != nil {
		return rep, err
	}
	servers, err := s.serverInfo(ctx)
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
		tr.Done(1)
		e, err := s.cat.Stat(ctx, path)
		if err != nil || e.IsDir || len(e.Replicas) == 0 {
			continue
		}
		rep.Files++
		before := len(rep.Problems)
		if e.Layout.Kind == shoal.LayoutEC {
			rep.Problems = append(rep.Problems, s.scrubEC(ctx, servers, e, wrap)...)
			rep.Replicas += len(e.Replicas)
		} else {
			for _, r := range e.Replicas {
				rep.Replicas++
				problem, n := checkReplica(ctx, s.storeOf(servers, r.Server), r, e.Size, lim)
				tr.Read(n)
				if problem != "" {
					rep.Problems = append(rep.Problems, wire.ProblemReplica{Path: e.Path, Layout: e.Layout.String(),
						Server: r.Server, Object: r.Object, Shard: r.Shard, Problem: problem})
				}
			}
		}
		if len(rep.Problems) > before {
			rep.Bad++
			tr.Problem(len(rep.Problems) - before)
		}
	}
	rep.BytesRead = tr.Snapshot().Bytes
	rep.Elapsed = time.Since(start).Round(time.Millisecond).String()
	return rep, ctx.Err()
}

func (s *Server) scrubEC(ctx context.Context, servers map[string]shoal.Server, e *shoal.Entry, wrap func(shoal.BlobStore) shoal.BlobStore) []wire.ProblemReplica {
	st, ids, object, err := s.ecStore(servers, e, wrap)
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
