package gw

import (
	"context"
	"time"

	"shoal"
)

// staleRefreshes is how many refresh intervals md's server list may go
// unrenewed before the gw counts as not ready: one failed fetch is a
// blip, three in a row mean md is out of reach.
const staleRefreshes = 3

// Health is the gw's readiness, for /.shoal/healthz: a gw serves files
// only through the data servers md lists (each signed URL names them by
// id), so it is ready while it holds that list, fetched lately. A list
// too old is fetched again now, so a gw that reaches md again, or one
// just started whose first fetch raced md's start, is healthy at once
// rather than at its next refresh. Without an md (a fixed server map)
// there is nothing to wait for.
func (s *Server) Health(ctx context.Context) error {
	const op = "gw.Health"
	if s.md == nil {
		return nil
	}
	if age, ok := s.dir.age(); ok && age < staleRefreshes*s.opts.RefreshInterval {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return shoal.E(op, shoal.KindUnavailable, err)
	}
	if err := s.dir.refresh(); err != nil {
		return shoal.Errorf(op, shoal.KindUnavailable, "no server list from md: %v", err)
	}
	return nil
}

// age is how long ago md's server list was fetched; false if never.
func (d *directory) age() (time.Duration, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fetched.IsZero() {
		return 0, false
	}
	return time.Since(d.fetched), true
}
