package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"os"
	"sync/atomic"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/diskserver"
	"shoal/gw"
	"shoal/internal/netguard"
	"shoal/internal/objhttp"
	"shoal/metrics"
)

// This file is the operator view of each server: the metrics registry,
// /.shoal/metrics and /.shoal/healthz (metrics.Middleware), and the
// collectors and health checks of md, the data server and the gw.

// newRegistry returns a registry with the build and runtime collectors.
func newRegistry() *metrics.Registry {
	reg := metrics.NewRegistry()
	reg.Register(metrics.BuildInfoCollector(version, commit), metrics.RuntimeCollector())
	return reg
}

// observeMD registers md's collectors (cache, SQL round trips, garbage
// acknowledged) and its health check (a Stat of "/" in the SQL catalog,
// past the cache) in reg. It returns the catalog to give md: cat, counting
// the garbage data servers acknowledge.
func observeMD(reg *metrics.Registry, cat shoal.Catalog) shoal.Catalog {
	inner := cat
	if cc, ok := cat.(*cachedCatalog); ok {
		reg.Register(metrics.CacheCollector(cc.Stats))
		inner = cc.Inner()
	}
	if rt, ok := inner.(interface{ RoundTrips() uint64 }); ok {
		reg.Register(metrics.RoundTripsCollector(rt.RoundTrips))
	}
	if gs, ok := inner.(interface{ GroupStats() (uint64, uint64) }); ok {
		reg.Register(metrics.CommitsCollector(gs.GroupStats))
	}
	reg.AddCheck("catalog", func(ctx context.Context) error {
		_, err := inner.Stat(ctx, "/")
		return err
	})
	if sp, ok := inner.(catalogSpace); ok {
		// A full catalog disk makes every write fail (507): md says so
		// rather than let it be found through failed commits.
		reg.AddCheck("catalog disk", sp.SpaceProblem)
		reg.Register(metrics.CatalogSpaceCollector(sp.SpaceProblem, sp.DiskSpace))
	}
	gc := &garbageCounting{Catalog: cat}
	reg.Register(metrics.GarbageCollector(gc.dropped.Load))
	return gc
}

// catalogSpace is what the SQL catalog tells of its disk.
type catalogSpace interface {
	SpaceProblem(ctx context.Context) error
	DiskSpace() (free, total int64, ok bool)
}

// garbageCounting counts the garbage items md drops once data servers
// acknowledge their removal.
type garbageCounting struct {
	shoal.Catalog
	dropped atomic.Uint64
}

func (g *garbageCounting) DropGarbage(ctx context.Context, ids []int64) error {
	err := g.Catalog.DropGarbage(ctx, ids)
	if err == nil {
		g.dropped.Add(uint64(len(ids)))
	}
	return err
}

// observedDisk serves a data server's handler behind metrics.Middleware.
// diskserver keeps its own fasthttp.Server private, so this one mirrors
// its settings (diskserver.New); diskserver exposing its server or taking
// a middleware would remove the copy.
type observedDisk struct {
	disk *diskserver.Server
	http *fasthttp.Server
	net  netguard.Config
}

// observeDisk registers the data server's space collectors and its health
// check (every data directory is a directory, its space is readable, and
// not every disk is down to its reserve: a full data server is 503 with
// the reason).
func observeDisk(reg *metrics.Registry, disk *diskserver.Server, cfg netguard.Config) *observedDisk {
	store := disk.Store()
	reg.Register(metrics.SpaceCollector(disk.ID(), store.Space), metrics.DiskFullCollector(disk.ID(), store.Full))
	reg.AddCheck("disk", func(ctx context.Context) error {
		for _, d := range store.Dirs() {
			fi, err := os.Stat(d)
			if err != nil {
				return err
			}
			if !fi.IsDir() {
				return fmt.Errorf("%s is not a directory", d)
			}
		}
		if _, err := store.Space(ctx); err != nil {
			return err
		}
		return store.Full()
	})
	// Only decides pre-reading; the data server enforces the limit. On
	// 32-bit ARM an int cannot hold 64 GiB.
	maxBody := int(min(diskserver.DefaultMaxBodySize, math.MaxInt))
	srv := objhttp.NewHTTPServer(metrics.Middleware(disk.Handler(), reg, "disk"), "shoal-disk", int64(maxBody), cfg)
	srv.Logger = slogPrintf("disk")
	return &observedDisk{disk: disk, http: srv, net: cfg}
}

// Serve starts the data server's loops and serves ln until Close.
func (d *observedDisk) Serve(ln net.Listener) error {
	d.disk.Start(context.Background())
	return d.http.Serve(netguard.Listen(ln, d.net.Limits))
}

// Close stops serving (in-flight requests finish) and the loops.
func (d *observedDisk) Close() error {
	return errors.Join(d.http.Shutdown(), d.disk.Close())
}

// observeGW registers the gw's health check: it holds md's server list,
// fetched lately (gw.Server.Health), without which it can serve no file.
// Its requests are counted by the middleware newGW wraps its handler in;
// a gw holds no data, so it has no space collectors.
func observeGW(reg *metrics.Registry, g *gw.Server) {
	reg.AddCheck("gw", g.Health)
}

// guarded serves srv on ln within net's connection caps and idle deadlines.
func guarded(srv *fasthttp.Server, cfg netguard.Config) func(net.Listener) error {
	return func(ln net.Listener) error { return srv.Serve(netguard.Listen(ln, cfg.Limits)) }
}

// observedMD wraps an md HTTP server's handler in reg's middleware.
func observedMD(srv *fasthttp.Server, reg *metrics.Registry, component string) *fasthttp.Server {
	srv.Handler = metrics.Middleware(srv.Handler, reg, component)
	srv.Logger = slogPrintf(component)
	return srv
}

// slogPrintf sends fasthttp's own messages (connections it could not
// serve: malformed requests, timeouts) to the structured log instead of
// its default unstructured logger on stderr, quoted request parts
// redacted (objhttp.FastHTTPLogger).
func slogPrintf(component string) fasthttp.Logger {
	return objhttp.FastHTTPLogger(slog.Default().With("component", component))
}
