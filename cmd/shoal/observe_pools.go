package main

import (
	"context"
	"time"

	"shoal"
)

// garbageCounting embeds shoal.Catalog, which hides the catalog's optional
// extensions from md's type assertions: pass them through.
var (
	_ shoal.PoolStore       = (*garbageCounting)(nil)
	_ shoal.ReplicaReplacer = (*garbageCounting)(nil)
)

func (g *garbageCounting) poolStore() (shoal.PoolStore, error) {
	ps, ok := g.Catalog.(shoal.PoolStore)
	if !ok {
		return nil, shoal.Errorf("catalog", shoal.KindUnsupported, "the catalog has no pools")
	}
	return ps, nil
}

func (g *garbageCounting) PutPool(ctx context.Context, p shoal.Pool) error {
	ps, err := g.poolStore()
	if err != nil {
		return err
	}
	return ps.PutPool(ctx, p)
}

func (g *garbageCounting) Pools(ctx context.Context) ([]shoal.Pool, error) {
	ps, err := g.poolStore()
	if err != nil {
		return nil, err
	}
	return ps.Pools(ctx)
}

func (g *garbageCounting) SetDirPool(ctx context.Context, dir, pool string) error {
	ps, err := g.poolStore()
	if err != nil {
		return err
	}
	return ps.SetDirPool(ctx, dir, pool)
}

func (g *garbageCounting) PoolFor(ctx context.Context, path string) (shoal.Pool, error) {
	ps, err := g.poolStore()
	if err != nil {
		return shoal.Pool{}, err
	}
	return ps.PoolFor(ctx, path)
}

func (g *garbageCounting) ReplaceReplica(ctx context.Context, path string, old, new shoal.Replica, graceUntil time.Time) error {
	rr, ok := g.Catalog.(shoal.ReplicaReplacer)
	if !ok {
		return shoal.Errorf("catalog", shoal.KindUnsupported, "the catalog cannot replace replicas")
	}
	return rr.ReplaceReplica(ctx, path, old, new, graceUntil)
}
