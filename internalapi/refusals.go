package internalapi

import (
	"sync"
	"time"
)

// refusalEvery is how often md logs again that it refuses a server's
// heartbeats: the first refusal at once (a server moved to a certificate
// md does not trust, an http URL in a TLS cluster), then once a minute
// while the server keeps heartbeating, not every two seconds.
const refusalEvery = time.Minute

// refusalLog decides which refused heartbeats are logged.
type refusalLog struct {
	mu   sync.Mutex
	last map[string]time.Time // server id → last logged
}

// due reports whether a refusal of server id's heartbeat at now is logged.
func (r *refusalLog) due(id string, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last == nil {
		r.last = map[string]time.Time{}
	}
	if t, ok := r.last[id]; ok && now.Sub(t) < refusalEvery {
		return false
	}
	if len(r.last) >= 10000 {
		clear(r.last) // ids are the callers' (signed, but many): bound the map
	}
	r.last[id] = now
	return true
}
