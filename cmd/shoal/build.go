package main

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"

	"shoal"
	"shoal/auth"
	"shoal/catalog"
	"shoal/cmd/shoal/config"
	"shoal/diskserver"
	"shoal/diskserver/remote"
	"shoal/jobs"
	"shoal/md"
	"shoal/placement"
	"shoal/sign"
	"shoal/tpc"
)

// This file turns a Config into the servers of shoal: the one place where
// config keys meet the packages' Options.

// openCatalog opens the SQL catalog named by c.Catalog.DSN and puts the
// configured cache tiers in front of it. sole says this process is the
// catalog's only md (see cache.Options.SoleMD). The caller closes it.
func openCatalog(ctx context.Context, c *config.Config, sole bool, log *slog.Logger) (shoal.Catalog, error) {
	db, err := catalog.Open(ctx, catalogOptions(c))
	if err != nil {
		return nil, err
	}
	if durable, how, err := db.Durability(ctx); err == nil && !durable {
		log.Warn("the catalog database does not make every commit durable: an answered write may be lost if its host crashes", "catalog", how)
	}
	return withCache(db, c, sole, log)
}

// catalogOptions are the catalog.* keys of c.
func catalogOptions(c *config.Config) catalog.Options {
	return catalog.Options{
		DSN:             c.Catalog.DSN,
		MaxOpenConns:    c.Catalog.MaxOpenConns,
		MaxIdleConns:    c.Catalog.MaxIdleConns,
		ConnMaxLifetime: c.Catalog.ConnMaxLifetime,
		BusyTimeout:     c.Catalog.BusyTimeout,
		CallTimeout:     c.Catalog.CallTimeout,
		SoloCommits:     !c.Catalog.GroupCommit,
		WriteBatches:    c.Catalog.WriteBatches,
	}
}

// newMD builds the metadata frontend over cat, enforcing a (see newAuth),
// logging to log; the jobs created through it poke runner (nil: none in
// this process); peerTLS is how it reaches data servers (set: the cluster
// runs TLS, see md.Options.PeerTLS); t makes its third-party copies.
//
// local is the data server in the same process (shoal all), whose files
// md then serves and writes itself when all.local_data is on; nil for
// `shoal md`.
func newMD(c *config.Config, cat shoal.Catalog, keys *sign.Keys, runner *jobs.Runner, a *auth.Auth, peerTLS *tls.Config, t *tpc.Client, mdAddr net.Addr, log *slog.Logger, local *diskserver.Server) (*md.Server, error) {
	inline := int64(c.MD.InlineMax)
	if inline == 0 {
		inline = -1 // md: 0 means its default, <0 disables
	}
	var created func(int64)
	if runner != nil {
		created = func(int64) { runner.Poke() }
	}
	probe := c.MD.ProbeInterval
	if probe == 0 {
		probe = -1 // likewise
	}
	var localStore shoal.BlobStore
	var localID string
	if local != nil && c.All.LocalData {
		localStore, localID = local.Store(), local.ID()
	}
	return md.New(md.Options{
		LocalStore:       localStore,
		LocalServer:      localID,
		JobCreated:       created,
		Catalog:          cat,
		Keys:             keys,
		DataMode:         c.MD.DataMode,
		InlineMax:        inline,
		NoRedirectAgents: c.MD.NoRedirectAgents,
		URLTTL:           c.MD.URLTTL,
		ServerTTL:        c.MD.ServerTTL,
		ProbeInterval:    probe,

		AllowPoolProppatch: c.MD.AllowPoolProppatch,
		DegradedWrites:     c.MD.DegradedWrites,

		MaxXMLBody:        int64(c.MD.MaxXMLBody),
		MaxInternalBody:   int64(c.MD.MaxInternalBody),
		MaxPutBody:        int64(c.MD.MaxPutBody),
		ChunkedReserve:    int64(c.MD.ChunkedReserve),
		LockTimeout:       c.MD.LockTimeout,
		UploadTTL:         c.MD.UploadTTL,
		MaxPendingUploads: c.MD.MaxPendingUploads,
		MaxLockOwner:      int(c.MD.MaxLockOwner),
		LocksPerPrincipal: c.MD.LocksPerPrincipal,
		LocksTotal:        c.MD.LocksTotal,
		Net:               c.Net.Guard(),
		ActiveContent:     c.MD.ActiveContent,
		AllowedHosts:      c.MD.AllowedHosts,

		Auth:      a,
		AccessLog: accessLog(c),
		AuditLog:  log,
		PeerTLS:   peerTLS,
		TPC:       t,
		LocalURLs: localURLs(c, mdAddr),
	})
}

// newRunner starts the admin-job runner beside md, over the same catalog
// (cache included, so that the rows a repair moves are seen at once), or
// returns nil when jobs.run is off. It reaches data servers as md's
// clients do: over HTTP (https verified with peerTLS), signed with the
// cluster secret.
func newRunner(c *config.Config, cat shoal.Catalog, keys *sign.Keys, peerTLS *tls.Config, log *slog.Logger) (*jobs.Runner, error) {
	if !c.Jobs.Run {
		return nil, nil
	}
	return jobs.NewRunner(jobs.RunnerOptions{
		Jobs:   cat,
		Lease:  c.Jobs.Lease,
		Keep:   c.Jobs.Keep,
		Logger: log,
		Env: jobs.Env{
			Catalog:        cat,
			Store:          func(sv shoal.Server) shoal.BlobStore { return remote.NewTLS(sv.URL, keys, peerTLS) },
			ServerTTL:      c.MD.ServerTTL,
			Grace:          c.MD.URLTTL,
			PlacementStale: placement.Refresh,
		},
	})
}

// closeRunner closes r (nil: none).
func closeRunner(r *jobs.Runner) {
	if r != nil {
		r.Close()
	}
}

// shutdownMD is how md's public server stops: first the admin commands
// following jobs are told md is going (they would hold the shutdown for
// as long as a drain), and the runner hands its jobs back (another md, or
// this one restarted, resumes them); then in-flight requests finish.
func shutdownMD(mds *md.Server, runner *jobs.Runner, shutdown func() error) func() error {
	return func() error {
		mds.EndFollowing()
		closeRunner(runner)
		return shutdown()
	}
}

// newDisk builds a data server that reports to mdURL (verified with
// toMD when https) and tells md that clients reach it at publicURL; t
// makes the third-party copies md sends it.
func newDisk(c *config.Config, keys *sign.Keys, dirs []string, mdURL, publicURL string, toMD *tls.Config, t *tpc.Client, log *slog.Logger) (*diskserver.Server, error) {
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
		GarbageInterval:   c.Disk.Garbage,
		ReserveBytes:      zeroIsNone(c.Disk.Reserve),
		PackMax:           zeroIsNone(c.Disk.PackMax),
		NoMD5:             !c.Disk.MD5,
		MaxBodySize:       int64(c.Disk.MaxBody),
		Logger:            log,
		AccessLog:         accessLog(c),
		ClientTLS:         toMD,
		TPC:               t,
	})
}

// zeroIsNone is a size whose 0 means none in the config (disk.reserve,
// disk.pack_max) as diskserver.Options reads it (there 0 is the default,
// <0 none).
func zeroIsNone(r config.Size) int64 {
	if r == 0 {
		return -1
	}
	return int64(r)
}
