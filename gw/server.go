package gw

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/diskserver/remote"
	"shoal/internal/httperr"
	"shoal/internal/netguard"
	"shoal/internal/objhttp"
	"shoal/sign"
	"shoal/tpc"
	"shoal/wire"
)

// Server defaults.
const (
	DefaultPool              = shoal.GatewayPool // the pool md sends EC and mirrored writes through
	DefaultHeartbeatInterval = 2 * time.Second
	DefaultMaxBodySize       = 64 << 30
)

// ServerOptions configure a Server.
type ServerOptions struct {
	ID         string     // server id reported to md; required
	Listen     string     // host:port, for ListenAndServe
	PublicURL  string     // base URL md redirects clients to
	MDURL      string     // md's base URL; empty: no commits, heartbeats or server list
	Keys       *sign.Keys // cluster secrets
	Pool       string     // pool reported in heartbeats; empty: DefaultPool
	StripeSize int        // user bytes per stripe for new files; 0: ec.DefaultStripeSize
	// Servers maps data-server ids to base URLs without asking md (tests,
	// or a fixed deployment); md's list, when there is one, adds to it.
	Servers           map[string]string
	HeartbeatInterval time.Duration   // 0: DefaultHeartbeatInterval
	RefreshInterval   time.Duration   // server list; 0: DefaultRefresh
	MaxBodySize       int64           // 0: DefaultMaxBodySize
	Net               netguard.Config // connection caps and timeouts (zero: netguard.Defaults)
	Logger            *slog.Logger    // nil: slog.Default()
	AccessLog         *slog.Logger    // one line per object request (objhttp.LogAccess); nil: none
	// ClientTLS is the client config of the gw's https calls to md and
	// the data servers (the cluster CA); nil: the system roots.
	ClientTLS *tls.Config
	// TPC makes the third-party copies md redirects here; nil: COPY is refused.
	TPC *tpc.Client
	// Wrap, when set, wraps the gw's handler in the server it serves:
	// cmd/shoal puts the metrics middleware there (/.shoal/metrics and
	// /.shoal/healthz, see Health), which gw does not import.
	Wrap func(fasthttp.RequestHandler) fasthttp.RequestHandler
}

// Server is the HTTP front of the gateway: a data server speaking
// diskserver's object protocol, with the shard servers named in each
// signed URL (see wire.GatewayURL).
type Server struct {
	opts ServerOptions
	dir  *directory
	md   *wire.Client
	log  *slog.Logger
	http *fasthttp.Server

	active  objhttp.Active // uploads being received, renewed by heartbeats
	loops   objhttp.Loops
	serving objhttp.Serving
}

// NewServer checks opts and prepares the server; nothing runs until Start
// or Serve.
func NewServer(opts ServerOptions) (*Server, error) {
	const op = "gw.NewServer"
	if opts.Keys == nil {
		return nil, shoal.Errorf(op, shoal.KindInvalid, "no signing keys")
	}
	if opts.ID == "" {
		return nil, shoal.Errorf(op, shoal.KindInvalid, "no server id")
	}
	if opts.Pool == "" {
		opts.Pool = DefaultPool
	}
	if opts.HeartbeatInterval <= 0 {
		opts.HeartbeatInterval = DefaultHeartbeatInterval
	}
	if opts.RefreshInterval <= 0 {
		opts.RefreshInterval = DefaultRefresh
	}
	opts.Net = opts.Net.OrDefaults()
	if opts.MaxBodySize <= 0 {
		opts.MaxBodySize = DefaultMaxBodySize
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	keys := opts.Keys
	s := &Server{opts: opts, log: opts.Logger.With("server", opts.ID)}
	s.dir = &directory{
		static:  opts.Servers,
		dial:    func(u string) shoal.BlobStore { return remote.NewTLS(u, keys, opts.ClientTLS) },
		clients: map[string]shoal.BlobStore{},
	}
	if opts.MDURL != "" {
		s.md = wire.NewClient(opts.MDURL, keys)
		s.md.HTTP.TLSConfig = opts.ClientTLS
		s.dir.md = s.md
	}
	h := s.Handler()
	if opts.Wrap != nil {
		h = opts.Wrap(h)
	}
	s.http = objhttp.NewHTTPServer(h, "shoal-gw", opts.MaxBodySize, opts.Net)
	s.http.Logger = objhttp.FastHTTPLogger(s.log)
	return s, nil
}

// ID is the server's id.
func (s *Server) ID() string { return s.opts.ID }

// RefreshServers reads md's server list now, not at the next refresh: a
// process that knows its data servers have just registered (shoal all,
// before it says ready) makes the gw reach them at their URLs of now.
func (s *Server) RefreshServers() error { return s.dir.refresh() }

// Start starts the heartbeat and server-list loops (with an md), once.
func (s *Server) Start(ctx context.Context) {
	s.loops.Start(ctx, func(ctx context.Context) {
		if s.md == nil {
			return
		}
		s.dir.refresh()
		s.loops.Go(func() { s.dir.loop(ctx, s.opts.RefreshInterval) })
		s.loops.Go(func() { s.heartbeatLoop(ctx) })
	})
}

// Serve starts the loops and serves HTTP on ln until Close.
func (s *Server) Serve(ln net.Listener) error {
	s.Start(context.Background())
	return s.serving.Serve(s.http, netguard.Listen(ln, s.opts.Net.Limits))
}

// ListenAndServe listens on Options.Listen and serves until Close.
func (s *Server) ListenAndServe() error {
	ln, err := net.Listen("tcp", s.opts.Listen)
	if err != nil {
		return shoal.E("gw.Listen", s.opts.Listen, shoal.KindUnavailable, err)
	}
	return s.Serve(ln)
}

// Close stops the loops and the HTTP server.
func (s *Server) Close() error {
	s.loops.Stop()
	return s.serving.Shutdown(s.http)
}

// heartbeatLoop registers the gw with md, every HeartbeatInterval and
// soon again after a failure (objhttp.Beat). A gw holds no data itself,
// so it reports no space; md knows it by its pool.
func (s *Server) heartbeatLoop(ctx context.Context) {
	objhttp.Beat(ctx, s.opts.HeartbeatInterval, func() error {
		hb := wire.Heartbeat{ID: s.opts.ID, URL: s.opts.PublicURL, Pool: s.opts.Pool, Uploads: s.active.List()}
		_, err := s.md.Call(wire.PathHeartbeat, hb, nil)
		if err != nil && ctx.Err() == nil {
			s.log.Warn("heartbeat", "err", err)
		}
		return err
	})
}

// Handler serves /obj/<id>.
func (s *Server) Handler() fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		path := string(ctx.Path())
		if !strings.HasPrefix(path, "/obj/") {
			httperr.Write(ctx, shoal.Errorf("gw", shoal.KindNotFound, "no such endpoint"))
			return
		}
		s.serveObject(ctx, path[len("/obj/"):])
		if s.opts.AccessLog != nil {
			objhttp.LogAccess(s.opts.AccessLog, ctx, path[len("/obj/"):])
		}
	}
}
