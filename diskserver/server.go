// Package diskserver is shoal's data server over local disks: a BlobStore
// of immutable objects under ids (Store), and an HTTP server (Server) that
// serves them to clients holding a signed URL from md, commits finished
// uploads to md, heartbeats its free space and drains its garbage queue.
//
// diskserver must not import md, gw, ec, catalog or cache: it knows md
// only through wire.
package diskserver

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/internal/httperr"
	"shoal/internal/netguard"
	"shoal/internal/objhttp"
	"shoal/sign"
	"shoal/tpc"
	"shoal/wire"
)

// Defaults for Options.
const (
	DefaultHeartbeatInterval = 2 * time.Second
	DefaultGarbageInterval   = 30 * time.Second
	DefaultMaxBodySize       = 64 << 30 // largest PUT body, bytes
	DefaultPool              = "default"
	// GarbageBatch is how many garbage items one drain asks md for.
	GarbageBatch = 1000
)

// Options configure a Server.
type Options struct {
	ID                string          // stable server id; empty: persisted in Dirs[0]/server-id
	Listen            string          // host:port, used by cmd to make the listener
	PublicURL         string          // base URL md redirects clients to
	Dirs              []string        // data directories, one per disk
	MDURL             string          // md's base URL; empty: no commits, heartbeats or garbage
	Keys              *sign.Keys      // cluster secrets
	Pool              string          // pool this server belongs to; empty: DefaultPool
	HeartbeatInterval time.Duration   // 0: DefaultHeartbeatInterval
	GarbageInterval   time.Duration   // 0: DefaultGarbageInterval
	MaxBodySize       int64           // 0: DefaultMaxBodySize
	Net               netguard.Config // connection caps and timeouts (zero: netguard.Defaults)
	ReserveBytes      int64           // free space kept on each disk; 0: DefaultReserveBytes, <0: none
	PackMax           int64           // largest staged object kept in a pack; 0: DefaultPackMax, <0: none
	NoMD5             bool            // file objects get an adler32 only (Store.SetMD5)
	Logger            *slog.Logger    // nil: slog.Default()
	AccessLog         *slog.Logger    // one line per object request (objhttp.LogAccess); nil: none
	// ClientTLS is the client config of calls to an https md (the
	// cluster CA); nil: the system roots.
	ClientTLS *tls.Config
	// TPC makes the third-party copies md redirects here; nil: COPY is refused.
	TPC *tpc.Client
}

// Server is the HTTP front of a Store.
type Server struct {
	opts   Options
	store  *Store
	unlock func()       // releases the data directories' locks (Close)
	md     *wire.Client // nil without MDURL
	log    *slog.Logger
	http   *fasthttp.Server

	replays *wire.ReplayGuard // nonces of md's calls already served
	active  objhttp.Active    // uploads being received, renewed by heartbeats
	loops   objhttp.Loops
	serving objhttp.Serving
}

// New opens the data directories and prepares the server; nothing runs
// until Start or Serve.
func New(opts Options) (*Server, error) {
	const op = "diskserver.New"
	if opts.Keys == nil {
		return nil, shoal.Errorf(op, shoal.KindInvalid, "no signing keys")
	}
	if len(opts.Dirs) == 0 {
		return nil, shoal.Errorf(op, shoal.KindInvalid, "no data directory")
	}
	if opts.Pool == "" {
		opts.Pool = DefaultPool
	}
	if opts.HeartbeatInterval <= 0 {
		opts.HeartbeatInterval = DefaultHeartbeatInterval
	}
	if opts.GarbageInterval <= 0 {
		opts.GarbageInterval = DefaultGarbageInterval
	}
	opts.Net = opts.Net.OrDefaults()
	if opts.MaxBodySize <= 0 {
		opts.MaxBodySize = DefaultMaxBodySize
	}
	reserve := opts.ReserveBytes
	switch {
	case reserve == 0:
		reserve = DefaultReserveBytes
	case reserve < 0:
		reserve = 0
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	// Before NewStore, which repairs what a crash left (temp files,
	// torn pack records): never what another server is writing.
	var locks []*os.File
	unlock := func() {
		for _, f := range locks {
			f.Close()
		}
	}
	for _, dir := range opts.Dirs {
		f, err := lockDir(dir)
		if err != nil {
			unlock()
			return nil, err
		}
		locks = append(locks, f)
	}
	store, err := NewStore(opts.Dirs, reserve)
	if err != nil {
		unlock()
		return nil, err
	}
	store.SetPackMax(opts.PackMax)
	store.SetMD5(!opts.NoMD5)
	if opts.ID == "" {
		if opts.ID, err = ServerID(opts.Dirs[0]); err != nil {
			unlock()
			return nil, err
		}
	}
	s := &Server{opts: opts, store: store, unlock: unlock, log: opts.Logger.With("server", opts.ID), replays: wire.NewReplayGuard()}
	if opts.MDURL != "" {
		s.md = wire.NewClient(opts.MDURL, opts.Keys)
		s.md.HTTP.TLSConfig = opts.ClientTLS
	}
	s.http = objhttp.NewHTTPServer(s.Handler(), "shoal-disk", opts.MaxBodySize, opts.Net)
	s.http.Logger = objhttp.FastHTTPLogger(s.log)
	return s, nil
}

// ID is the server's id, as reported to md.
func (s *Server) ID() string { return s.opts.ID }

// Store is the server's local store.
func (s *Server) Store() *Store { return s.store }

// Start starts the heartbeat and garbage loops (if MDURL is set), once;
// they stop when ctx is cancelled or on Close. Serve calls it; a process
// that mounts Handler in its own server (shoal all) calls it once md is up.
func (s *Server) Start(ctx context.Context) {
	s.loops.Start(ctx, func(ctx context.Context) {
		if s.md == nil {
			return
		}
		s.loops.Go(func() { s.heartbeatLoop(ctx) })
		s.loops.Go(func() { s.garbageLoop(ctx) })
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
		return shoal.E("diskserver.Listen", s.opts.Listen, shoal.KindUnavailable, err)
	}
	return s.Serve(ln)
}

// Close stops the loops and the HTTP server (if Serve was called).
func (s *Server) Close() error {
	s.loops.Stop()
	err := s.serving.Shutdown(s.http)
	if ferr := s.store.FlushStaged(); err == nil {
		err = ferr
	}
	s.unlock()
	return err
}

// Handler is the server's request handler: objects under /obj/ and the
// internal endpoints.
func (s *Server) Handler() fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		path := ctx.Path()
		switch {
		case strings.HasPrefix(string(path), "/obj/"):
			id := string(path[len("/obj/"):])
			s.serveObject(ctx, id)
			if s.opts.AccessLog != nil {
				objhttp.LogAccess(s.opts.AccessLog, ctx, id)
			}
		case string(path) == wire.PathObjects:
			s.serveObjectList(ctx)
		case string(path) == wire.PathSpace:
			s.serveSpace(ctx)
		default:
			httperr.Write(ctx, shoal.Errorf("diskserver", shoal.KindNotFound, "no such endpoint"))
		}
	}
}
