package md

import (
	"context"

	"shoal"
)

// propSource gives a PROPFIND's live properties what they need beyond the
// entry (dav.PropSource): quotas, free space and locks, from md's catalog
// and placement. One pointer: it goes into the interface without an
// allocation.
type propSource struct{ s *Server }

func (p propSource) QuotasFor(path string) ([]shoal.Quota, error) {
	return p.s.cat.QuotasFor(p.s.base, path)
}

func (p propSource) PoolFree(path string) (int64, error) { return p.s.poolFree(p.s.base, path) }

func (p propSource) Usage(path string) (int64, error) {
	used, _, err := p.s.cat.Usage(p.s.base, path)
	return used, err
}

func (p propSource) Locks(path string, subtree bool) ([]shoal.Lock, error) {
	return p.s.locks.Locks(path, subtree)
}

// poolFree is the room for new files at path (placement.View.Free of
// its pool).
func (s *Server) poolFree(ctx context.Context, path string) (int64, error) {
	pool, err := s.poolFor(ctx, path)
	if err != nil {
		return 0, err
	}
	return s.placement.Free(ctx, pool)
}
