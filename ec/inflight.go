package ec

import (
	"context"
	"sync"

	"shoal"
)

// inflight serializes Creates of one id within this process. Without it two
// Creates of the same id could deadlock: each shard store lets one Create
// per id run and makes the other wait, and the two gw Creates could each
// win on some shards and wait on the others. Stores are cheap and the gw
// server makes one per request, so the registry is process-wide. (md gives
// every upload a fresh id, so concurrent Creates of one id across gw
// processes do not happen in normal operation.)
var inflight = struct {
	mu  sync.Mutex
	ids map[string]chan struct{}
}{ids: map[string]chan struct{}{}}

// claim waits until no other Create of id runs in this process and claims
// it; release must be called when done.
func claim(ctx context.Context, id string) (release func(), err error) {
	for {
		inflight.mu.Lock()
		busy, ok := inflight.ids[id]
		if !ok {
			done := make(chan struct{})
			inflight.ids[id] = done
			inflight.mu.Unlock()
			return func() {
				inflight.mu.Lock()
				delete(inflight.ids, id)
				inflight.mu.Unlock()
				close(done)
			}, nil
		}
		inflight.mu.Unlock()
		select {
		case <-busy:
		case <-ctx.Done():
			return nil, shoal.E("ec.Create", id, shoal.KindTimeout, ctx.Err())
		}
	}
}
