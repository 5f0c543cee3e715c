package cache

import (
	"context"
	"encoding/json"
	"time"

	"shoal"
)

// Jobs are read by runners and admin commands, never on the stat path:
// they pass through uncached, so every md sees every change at once.

func (c *Catalog) CreateJob(ctx context.Context, j *shoal.Job) (*shoal.Job, error) {
	return c.inner.CreateJob(ctx, j)
}

func (c *Catalog) Jobs(ctx context.Context, limit int) ([]shoal.Job, error) {
	return c.inner.Jobs(ctx, limit)
}

func (c *Catalog) Job(ctx context.Context, id int64) (*shoal.Job, error) {
	return c.inner.Job(ctx, id)
}

func (c *Catalog) ClaimJob(ctx context.Context, owner string, now time.Time, lease time.Duration) (*shoal.Job, error) {
	return c.inner.ClaimJob(ctx, owner, now, lease)
}

func (c *Catalog) HeartbeatJob(ctx context.Context, id int64, owner string, progress json.RawMessage, now time.Time, lease time.Duration) error {
	return c.inner.HeartbeatJob(ctx, id, owner, progress, now, lease)
}

func (c *Catalog) FinishJob(ctx context.Context, j *shoal.Job, now time.Time) error {
	return c.inner.FinishJob(ctx, j, now)
}

func (c *Catalog) ForgetJobs(ctx context.Context, before time.Time) (int64, error) {
	return c.inner.ForgetJobs(ctx, before)
}

func (c *Catalog) CancelJob(ctx context.Context, id int64, now time.Time) (*shoal.Job, error) {
	return c.inner.CancelJob(ctx, id, now)
}
