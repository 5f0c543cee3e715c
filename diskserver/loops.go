package diskserver

import (
	"context"

	"shoal"
	"shoal/internal/objhttp"
	"shoal/wire"
)

// heartbeatLoop tells md, now and then every HeartbeatInterval, that this
// server is alive, where it is and how much room it has; a heartbeat that
// fails is tried again soon (objhttp.Beat).
func (s *Server) heartbeatLoop(ctx context.Context) {
	objhttp.Beat(ctx, s.opts.HeartbeatInterval, func() error {
		err := s.Heartbeat(ctx)
		if err != nil && ctx.Err() == nil {
			s.log.Warn("heartbeat to md failed", "err", err)
		}
		return err
	})
}

// Heartbeat sends one heartbeat to md.
func (s *Server) Heartbeat(ctx context.Context) error {
	sp, err := s.store.Space(ctx)
	if err != nil {
		return err
	}
	hb := wire.Heartbeat{ID: s.opts.ID, URL: s.opts.PublicURL, Pool: s.opts.Pool, Free: sp.Free, Total: sp.Total,
		Uploads: s.active.List()}
	_, err = s.md.Call(wire.PathHeartbeat, hb, nil)
	return err
}

// garbageLoop drains this server's garbage queue every GarbageInterval.
func (s *Server) garbageLoop(ctx context.Context) {
	objhttp.Every(ctx, s.opts.GarbageInterval, false, func() {
		if _, err := s.DrainGarbage(ctx); err != nil {
			s.log.Warn("garbage drain failed", "err", err)
		}
	})
}

// DrainGarbage asks md for due garbage, removes those objects and
// acknowledges them, batch after batch until the queue is empty. Removing
// is idempotent, so a lost acknowledgement only repeats harmless work. It
// returns how many objects were removed.
func (s *Server) DrainGarbage(ctx context.Context) (int, error) {
	total := 0
	for ctx.Err() == nil {
		var reply wire.GarbageReply
		if _, err := s.md.Call(wire.PathGarbage, wire.GarbageRequest{Server: s.opts.ID, Limit: GarbageBatch}, &reply); err != nil {
			return total, err
		}
		if len(reply.Items) == 0 {
			return total, nil
		}
		done := wire.GarbageDone{IDs: make([]int64, 0, len(reply.Items))}
		for _, it := range reply.Items {
			// A malformed id can name no object: acknowledge it, or it would
			// come back forever.
			if err := s.store.Remove(ctx, it.Object); err != nil && !shoal.IsKind(err, shoal.KindInvalid) {
				s.log.Warn("removing garbage", "object", it.Object, "err", err)
				continue // retried on the next drain
			}
			done.IDs = append(done.IDs, it.ID)
		}
		if len(done.IDs) > 0 {
			if _, err := s.md.Call(wire.PathGarbageOK, done, nil); err != nil {
				return total, err
			}
		}
		total += len(done.IDs)
		if len(reply.Items) < GarbageBatch || len(done.IDs) == 0 {
			return total, nil
		}
	}
	return total, ctx.Err()
}
