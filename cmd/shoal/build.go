package main

import (
	"context"
	"log/slog"

	"shoal"
	"shoal/catalog"
	"shoal/cmd/shoal/config"
	"shoal/diskserver"
	"shoal/md"
	"shoal/sign"
)

// This file turns a Config into the servers of shoal: the one place where
// config keys meet the packages' Options.

// openCatalog opens the SQL catalog named by c.Catalog.DSN and puts the
// configured cache tiers in front of it. The caller closes it.
func openCatalog(ctx context.Context, c *config.Config, log *slog.Logger) (shoal.Catalog, error) {
	db, err := catalog.Open(ctx, catalog.Options{
		DSN:             c.Catalog.DSN,
		MaxOpenConns:    c.Catalog.MaxOpenConns,
		MaxIdleConns:    c.Catalog.MaxIdleConns,
		ConnMaxLifetime: c.Catalog.ConnMaxLifetime,
		BusyTimeout:     c.Catalog.BusyTimeout,
	})
	if err != nil {
		return nil, err
	}
	return withCache(db, c, log)
}

// newMD builds the metadata frontend over cat.
func newMD(c *config.Config, cat shoal.Catalog, keys *sign.Keys) (*md.Server, error) {
	inline := int64(c.MD.InlineMax)
	if inline == 0 {
		inline = -1 // md: 0 means its default, <0 disables
	}
	return md.New(md.Options{
		Catalog:          cat,
		Keys:             keys,
		DataMode:         c.MD.DataMode,
		InlineMax:        inline,
		NoRedirectAgents: c.MD.NoRedirectAgents,
		URLTTL:           c.MD.URLTTL,
		ServerTTL:        c.MD.ServerTTL,

		AllowPoolProppatch: c.MD.AllowPoolProppatch,
		DegradedWrites:     c.MD.DegradedWrites,

		MaxXMLBody:        int64(c.MD.MaxXMLBody),
		MaxPutBody:        int64(c.MD.MaxPutBody),
		LockTimeout:       c.MD.LockTimeout,
		UploadTTL:         c.MD.UploadTTL,
		MaxPendingUploads: c.MD.MaxPendingUploads,
		MaxLockOwner:      int(c.MD.MaxLockOwner),
		LocksPerPrincipal: c.MD.LocksPerPrincipal,
		LocksTotal:        c.MD.LocksTotal,
		Net:               c.Net.Guard(),
		ActiveContent:     c.MD.ActiveContent,
		AllowedHosts:      c.MD.AllowedHosts,
	})
}

// newDisk builds a data server that reports to mdURL and tells md that
// clients reach it at publicURL.
func newDisk(c *config.Config, keys *sign.Keys, dirs []string, mdURL, publicURL string, log *slog.Logger) (*diskserver.Server, error) {
	return diskserver.New(diskserver.Options{
		Net:               c.Net.Guard(),
		ID:                c.Disk.ID,
		Listen:            c.Disk.Listen,
		PublicURL:         publicURL,
		Dirs:              dirs,
		MDURL:             mdURL,
		Keys:              keys,
		Pool:              c.Disk.Pool,
		HeartbeatInterval: c.Disk.Heartbeat,
		Logger:            log,
	})
}
