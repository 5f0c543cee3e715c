// Package internalapi serves md's internal API (wire.Prefix): signed
// POSTs with JSON bodies. Data servers and gws call it to commit uploads,
// heartbeat and fetch their garbage; `shoal admin` calls it to list
// servers, put a drained server back to active, manage pools and quotas, and create, show, cancel and follow
// admin jobs (which md records in the catalog and runners beside it run:
// package jobs).
//
// md mounts it (API.Serve) on every path under wire.Prefix. It must not
// import md, a catalog or cache implementation, or a server package
// (diskserver, gw, ec, jobs): it works over a Catalog (root interfaces)
// and md's placement.View.
package internalapi

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/internal/httperr"
	"shoal/placement"
	"shoal/sign"
	"shoal/wire"
)

// DefaultMaxBody bounds a call's body (commits, heartbeats, garbage
// lists and admin requests are a few kB).
const DefaultMaxBody = 256 << 10

// Catalog is what the API reads and writes.
type Catalog interface {
	shoal.Writer
	shoal.ServerRegistry
	shoal.GarbageQueue
	shoal.PoolStore
	shoal.QuotaStore
	shoal.JobStore
}

// Config is what the API needs; the zero durations take defaults.
type Config struct {
	Catalog   Catalog         // required
	Keys      *sign.Keys      // required: verifies the calls
	Placement *placement.View // required: takes the heartbeats

	MaxBody   int64         // a call's body, read once its signature checks; 0: DefaultMaxBody
	Grace     time.Duration // how long replaced objects stay before they are garbage (md's URL TTL)
	UploadTTL time.Duration // how long a heartbeat renews the uploads it reports for
	// ProgressInterval is how often a followed job's progress is read
	// and sent; 0: DefaultProgressInterval.
	ProgressInterval time.Duration
	// JobCreated, if set, is called after a job is created (see
	// md.Options.JobCreated).
	JobCreated func(id int64)
	// ServerTTL is md.server_ttl, told to shoal admin with the server list.
	ServerTTL time.Duration
	// Log gets what md's operator must see: heartbeats md refuses; nil:
	// slog's default logger.
	Log *slog.Logger
}

// API answers the calls. Safe for concurrent use.
type API struct {
	cfg     Config
	cat     Catalog
	replays *wire.ReplayGuard // nonces of the calls already served
	// base is the context of every catalog call (never the
	// *fasthttp.RequestCtx, which is recycled after the handler returns).
	base context.Context
	// follow is the context of those who follow jobs, ended by
	// EndFollowing: a shutdown must not wait for the end of an hour-long
	// drain (which goes on in a runner).
	follow    context.Context
	endFollow context.CancelFunc
	refusals  refusalLog
}

// New is the API over cfg; base is the context of its catalog calls
// (md's, cancelled once md stopped serving).
func New(base context.Context, cfg Config) *API {
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.ProgressInterval <= 0 {
		cfg.ProgressInterval = DefaultProgressInterval
	}
	a := &API{cfg: cfg, cat: cfg.Catalog, replays: wire.NewReplayGuard(), base: base}
	a.follow, a.endFollow = context.WithCancel(base)
	return a
}

// EndFollowing ends, with a "shutting down" error line, every admin
// command following a job through this API (the jobs go on).
func (a *API) EndFollowing() { a.endFollow() }

// Serve answers the call to path (under wire.Prefix, without the query).
// A bad signature is 403; an unknown path 404.
func (a *API) Serve(ctx *fasthttp.RequestCtx, path string) {
	const op = "internal"
	if !ctx.IsPost() {
		httperr.Write(ctx, shoal.Errorf(op, shoal.KindPermission, "%s is reserved for md's internal API (signed POSTs)", wire.Prefix))
		return
	}
	body, err := wire.ReadCall(ctx, a.cfg.Keys, a.replays, a.cfg.MaxBody)
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	switch path {
	case wire.PathCommit:
		a.commit(ctx, body)
	case wire.PathHeartbeat:
		a.heartbeat(ctx, body)
	case wire.PathGarbage:
		a.garbage(ctx, body)
	case wire.PathGarbageOK:
		a.garbageDone(ctx, body)
	case wire.PathAbort:
		var req wire.AbortRequest
		err := decode(body, &req)
		if err == nil {
			err = a.cat.AbortUpload(a.base, req.Upload)
		}
		noContent(ctx, err)
	case wire.PathAdminServers:
		servers, err := a.cat.Servers(a.base)
		if a.cfg.ServerTTL > 0 {
			ctx.Response.Header.Set(wire.HeaderServerTTL, a.cfg.ServerTTL.String())
		}
		answer(ctx, servers, err)
	default:
		if !a.serveQuota(ctx, path, body) && !a.servePools(ctx, path, body) && !a.serveServers(ctx, path, body) && !a.serveJobs(ctx, path, body) {
			httperr.Write(ctx, shoal.Errorf(op, shoal.KindNotFound, "no such internal endpoint"))
		}
	}
}

func decode(body []byte, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		return shoal.Errorf("internal", shoal.KindInvalid, "bad JSON: %v", err)
	}
	return nil
}

// decodeOptional is decode for a body that may be empty.
func decodeOptional(body []byte, v any) error {
	if len(body) == 0 {
		return nil
	}
	return decode(body, v)
}

func replyJSON(ctx *fasthttp.RequestCtx, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		httperr.Write(ctx, shoal.E("internal", err))
		return
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.SetBody(b)
}

// answer replies v as JSON, or err.
func answer(ctx *fasthttp.RequestCtx, v any, err error) {
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	replyJSON(ctx, fasthttp.StatusOK, v)
}

// noContent replies 204, or err.
func noContent(ctx *fasthttp.RequestCtx, err error) {
	if err != nil {
		httperr.Write(ctx, err)
		return
	}
	ctx.SetStatusCode(fasthttp.StatusNoContent)
}
