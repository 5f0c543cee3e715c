package cache

import (
	"context"

	"shoal"
)

// Quotas pass through uncached: they are enforced by the SQL row alone,
// and read only when a client asks for the RFC 4331 properties or an
// operator lists them. Setting one changes no entry the tiers hold.

func (c *Catalog) SetQuota(ctx context.Context, dir string, bytes, files int64) (shoal.Quota, error) {
	return c.inner.SetQuota(ctx, dir, bytes, files)
}

func (c *Catalog) RemoveQuota(ctx context.Context, dir string) error {
	return c.inner.RemoveQuota(ctx, dir)
}

func (c *Catalog) Quotas(ctx context.Context) ([]shoal.Quota, error) {
	return c.inner.Quotas(ctx)
}

func (c *Catalog) QuotasFor(ctx context.Context, path string) ([]shoal.Quota, error) {
	return c.inner.QuotasFor(ctx, path)
}

// AbortUpload changes no entry: it passes through.
func (c *Catalog) AbortUpload(ctx context.Context, id string) error {
	return c.inner.AbortUpload(ctx, id)
}
