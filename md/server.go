// Package md is shoal's metadata frontend: it answers HTTP and WebDAV
// (RFC 4918 class 2) over a shoal.Catalog and sends file data to and from
// data servers (redirecting the client with a signed URL or streaming the
// bytes itself). Each concern beside that is a package md asks: dav (the
// wire protocol), placement (which server gets or serves a file), davlock
// (the locks), internalapi (the internal and admin API md mounts under
// wire.Prefix, admin jobs included), internal/accesslog (its logs).
//
// md never holds file data except inline files (small files kept whole in
// the catalog), bytes it proxies through, and in `shoal all` the objects
// of the data server in its own process, which it reads and writes
// through that server's store (Options.LocalStore: a shoal.BlobStore
// wired in cmd/shoal, so md imports no data-server package).
//
// md must not import gw, ec, diskserver, jobs, catalog or cache: it
// reaches data servers and gws over HTTP through wire (the gw URL is
// wire.GatewayURL), runs over any shoal.Catalog, and leaves the admin
// work (jobs, the EC engine) to the runners beside it.
package md

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/auth"
	"shoal/davlock"
	"shoal/internal/httperr"
	"shoal/internal/netguard"
	"shoal/internal/settle"
	"shoal/internalapi"
	"shoal/placement"
	"shoal/sign"
	"shoal/tpc"
)

// Data modes: how file bytes reach clients.
const (
	DataAuto     = "auto"     // PUT with Expect: 100-continue → 307; other PUT proxied; GET → 302 unless the User-Agent is in NoRedirectAgents
	DataRedirect = "redirect" // GET → 302, PUT → 307 to a data server
	DataProxy    = "proxy"    // md streams the bytes itself
)

// Defaults for Options left zero.
const (
	DefaultInlineMax         = 4096
	DefaultURLTTL            = 60 * time.Second
	DefaultServerTTL         = 10 * time.Second
	DefaultMaxXMLBody        = 1 << 20
	DefaultUploadTTL         = 2 * time.Minute
	DefaultMaxPendingUploads = 256
	DefaultChunkedReserve    = 1 << 30
)

// DefaultNoRedirectAgents are User-Agent substrings of clients that do not
// follow a 302 on GET (or follow it but resend credentials/lose the body):
// Windows' mini-redirector, litmus (neon without redirect support),
// davfs2 and gvfs/gio (both neon- or libsoup-based mounts that treat a 3xx
// as an error on GET).
var DefaultNoRedirectAgents = []string{"Microsoft-WebDAV-MiniRedir", "litmus", "davfs2", "gvfs", "gio/", "neon/"}

// Options configure a Server.
type Options struct {
	Catalog shoal.Catalog // required
	Keys    *sign.Keys    // required: signs data-server URLs, verifies internal calls

	DataMode         string        // auto (default), redirect or proxy
	InlineMax        int64         // files up to this size are kept in the catalog; 0 means DefaultInlineMax, <0 disables inline
	NoRedirectAgents []string      // nil means DefaultNoRedirectAgents
	URLTTL           time.Duration // validity of signed URLs and garbage grace; 0 means DefaultURLTTL
	ServerTTL        time.Duration // a data server is live if it heartbeated within this; 0 means DefaultServerTTL
	MaxXMLBody       int64         // PROPFIND/PROPPATCH bodies; 0 means DefaultMaxXMLBody
	MaxInternalBody  int64         // internal API calls' bodies, read once their signature checks; 0 means internalapi.DefaultMaxBody
	MaxPutBody       int64         // 0: no limit
	// ChunkedReserve is what a PUT of unknown length (chunked) reserves on
	// the quotas governing its path — less if they have less room left —
	// and the most it may write: the data server cuts it there (413).
	// 0 means DefaultChunkedReserve.
	ChunkedReserve int64
	// UploadTTL is how long a reservation lives past its last renewal:
	// the data server receiving an upload reports it in every heartbeat
	// and md renews it for UploadTTL. A reservation whose body never
	// arrives expires URLTTL + ServerTTL after it was made. 0 means
	// DefaultUploadTTL.
	UploadTTL time.Duration
	// MaxPendingUploads bounds the reservations one client (principal,
	// or address when anonymous) holds at once; beyond, PUT is 429.
	// 0 means DefaultMaxPendingUploads; <0 no limit.
	MaxPendingUploads int
	// DegradedWrites lets an ec:K+M write go ahead on K+M' servers
	// (1 ≤ M' < M) when the pool has fewer than K+M live: the shards left
	// out have no row, scrub reports them and repair rebuilds them. Off:
	// such a write fails with 507.
	DegradedWrites bool
	// ProgressInterval is how often a followed admin job's progress is
	// read from the catalog and sent; 0 means one second
	// (internalapi.DefaultProgressInterval).
	ProgressInterval time.Duration

	// JobCreated, if set, is called after an admin job is created through
	// this md (cmd/shoal pokes the runner beside it, so the job starts at
	// once rather than at the runner's next look).
	JobCreated func(id int64)

	// AllowPoolProppatch lets any client that may PROPPATCH a collection
	// (create or modify on it) map it to a pool with the shoal:pool
	// property: placement is the operator's, so it is off by default;
	// `shoal admin pool set` always works.
	AllowPoolProppatch bool

	// WebDAV locks: the longest timeout a client may ask for (0:
	// davlock.DefaultTimeout), the largest <D:owner> (0:
	// davlock.DefaultMaxOwner), how many locks one principal and everybody
	// may hold (0: the defaults; beyond them LOCK is 503).
	LockTimeout       time.Duration
	MaxLockOwner      int
	LocksPerPrincipal int
	LocksTotal        int

	// ActiveContent says how a file whose type a browser would run (HTML,
	// SVG, XHTML, JavaScript) is served from md: "sandbox" (default:
	// Content-Security-Policy: sandbox, so its scripts run in no origin)
	// or "attachment" (Content-Disposition: attachment, never rendered).
	ActiveContent string
	// AllowedHosts, when set, are the only Host names (without port) md
	// answers to; other requests get 400 (internal calls are exempt).
	AllowedHosts []string

	// Net bounds md's connections: header, idle and transfer-idle
	// timeouts, connection caps (the zero value: netguard.Defaults). The
	// same idle limit bounds md's own transfers to data servers.
	Net netguard.Config

	// ProbeInterval is how often md checks that every live data server
	// and gw answers HTTP; one that does not is suspect (no writes; reads
	// only when no other replica is left) until it heartbeats again. 0
	// means placement.DefaultProbeInterval; < 0 turns probing off (where md cannot
	// reach the servers' public URLs: then only failed proxied requests
	// and ServerTTL tell md that a server is gone).
	ProbeInterval time.Duration

	// Auth authenticates and authorizes every namespace request (see
	// authn.go). nil: no identity at all, every request is anonymous and
	// may do anything (library users and tests that do not care; the
	// binary always sets one).
	Auth *auth.Auth
	// AccessLog gets one line per namespace request, AuditLog one per
	// mutation (see accesslog.go); nil: none.
	AccessLog, AuditLog *slog.Logger
	// LocalStore is the store of the data server running in this process
	// (shoal all), whose id is LocalServer. md answers a GET of a file
	// with a replica there itself (sendfile when the store's objects are
	// files: shoal.FileObject), and writes an upload placed there into it
	// and commits it in-process: no redirect, no second request, no HTTP
	// hop. nil (clusters): every data byte goes through a data server's
	// or gw's URL.
	LocalStore  shoal.BlobStore
	LocalServer string

	// PeerTLS is the client config md reaches data servers and gws with
	// (the cluster CA). When set, the cluster runs TLS: a heartbeat is
	// accepted only from a server whose URL is https and verifies (see
	// placement.View.Heartbeat). nil: plain http allowed, the system roots
	// for https.
	PeerTLS *tls.Config

	// TPC makes third-party copies (tpc.go); nil: a COPY naming another
	// server is refused with 405. LocalURLs are md's own URLs and names
	// (tpc.ParseEndpoints): a COPY whose Destination names one of them,
	// or the Host it was sent to, is a plain WebDAV COPY.
	TPC       *tpc.Client
	LocalURLs []string
}

// Server is one md frontend. It is safe for concurrent use.
type Server struct {
	opts      Options
	cat       shoal.Catalog
	keys      *sign.Keys
	placement *placement.View
	client    *fasthttp.Client // to data servers, for proxy mode
	locks     *davlock.Manager // the WebDAV locks (in the catalog)
	api       *internalapi.API // the internal API (wire.Prefix)
	local     []tpc.Endpoint   // Options.LocalURLs

	// base is the context of every catalog call. Never the
	// *fasthttp.RequestCtx: it is recycled after the handler returns, and
	// database/sql watches a non-standard context from a goroutine that
	// may outlive the request (a data race the race detector found).
	base   context.Context
	cancel context.CancelFunc

	httpMu sync.Mutex
	http   *fasthttp.Server
	stop   chan struct{}
	done   sync.WaitGroup
	once   sync.Once
}

// New checks opts, fills defaults and starts the upload-expiry loop.
func New(opts Options) (*Server, error) {
	const op = "md.New"
	if opts.Catalog == nil || opts.Keys == nil {
		return nil, shoal.Errorf(op, shoal.KindInvalid, "Catalog and Keys are required")
	}
	switch opts.DataMode {
	case "":
		opts.DataMode = DataAuto
	case DataAuto, DataRedirect, DataProxy:
	default:
		return nil, shoal.Errorf(op, shoal.KindInvalid, "data mode %q: want auto, redirect or proxy", opts.DataMode)
	}
	if opts.InlineMax == 0 {
		opts.InlineMax = DefaultInlineMax
	}
	if opts.NoRedirectAgents == nil {
		opts.NoRedirectAgents = DefaultNoRedirectAgents
	}
	if opts.URLTTL <= 0 {
		opts.URLTTL = DefaultURLTTL
	}
	if opts.ServerTTL <= 0 {
		opts.ServerTTL = DefaultServerTTL
	}
	if opts.MaxPendingUploads == 0 {
		opts.MaxPendingUploads = DefaultMaxPendingUploads
	}
	if opts.UploadTTL <= 0 {
		opts.UploadTTL = DefaultUploadTTL
	}
	if opts.ProbeInterval == 0 {
		opts.ProbeInterval = placement.DefaultProbeInterval
	}
	if opts.ChunkedReserve <= 0 {
		opts.ChunkedReserve = DefaultChunkedReserve
	}
	if opts.MaxXMLBody <= 0 {
		opts.MaxXMLBody = DefaultMaxXMLBody
	}
	opts.Net = opts.Net.OrDefaults()
	switch opts.ActiveContent {
	case "":
		opts.ActiveContent = ActiveSandbox
	case ActiveSandbox, ActiveAttachment:
	default:
		return nil, shoal.Errorf(op, shoal.KindInvalid, "active content %q: want sandbox or attachment", opts.ActiveContent)
	}
	if err := settle.Staged(context.Background(), opts.Catalog, opts.LocalStore, opts.LocalServer, opts.AuditLog); err != nil {
		return nil, shoal.E(op, err)
	}
	if err := settle.Lost(context.Background(), opts.Catalog, opts.LocalStore, opts.LocalServer, opts.AuditLog); err != nil {
		return nil, shoal.E(op, err)
	}
	s := &Server{
		opts:      opts,
		cat:       opts.Catalog,
		keys:      opts.Keys,
		placement: placement.New(opts.Catalog, opts.ServerTTL, opts.PeerTLS),
		// No wall-clock limit on a proxied transfer: each connection
		// is cut when it makes no progress for Net.ReadIdle.
		client: &fasthttp.Client{
			Name:                     "shoal-md",
			NoDefaultUserAgentHeader: true,
			StreamResponseBody:       true,
			MaxConnsPerHost:          512,
			Dial:                     netguard.Dialer(fasthttp.Dial, opts.Net.ReadIdle),
			DisablePathNormalizing:   true,
			TLSConfig:                opts.PeerTLS,
			RetryIfErr:               netguard.RetryOnlyClosed,
		},
		stop:  make(chan struct{}),
		local: tpc.ParseEndpoints(opts.LocalURLs),
	}
	if opts.TPC != nil {
		opts.TPC.Guard().SetHosts(s.serverHosts) // copies never reach shoal's own servers
	}
	s.base, s.cancel = context.WithCancel(context.Background())
	s.locks = davlock.New(s.base, opts.Catalog, davlock.Limits{Timeout: opts.LockTimeout, MaxOwner: opts.MaxLockOwner,
		PerPrincipal: opts.LocksPerPrincipal, Total: opts.LocksTotal})
	// Followers of admin jobs end first on Close (EndFollowing): a
	// shutdown must not wait for the end of an hour-long drain, which
	// goes on in a runner.
	s.api = internalapi.New(s.base, internalapi.Config{
		Catalog: opts.Catalog, Keys: opts.Keys, Placement: s.placement,
		MaxBody: opts.MaxInternalBody, Grace: opts.URLTTL, UploadTTL: opts.UploadTTL,
		ProgressInterval: opts.ProgressInterval, JobCreated: opts.JobCreated, ServerTTL: opts.ServerTTL,
	})
	s.done.Add(2)
	go s.expireLoop()
	go func() {
		defer s.done.Done()
		s.placement.RefreshLoop(s.base, s.stop)
	}()
	if s.opts.ProbeInterval > 0 {
		s.done.Add(1)
		go func() {
			defer s.done.Done()
			s.placement.ProbeLoop(s.base, s.stop, s.opts.ProbeInterval)
		}()
	}
	return s, nil
}

// expireEvery is how often md voids expired reservations and locks.
const expireEvery = 5 * time.Second

// expireLoop voids upload reservations nobody committed, so that their
// objects reach the garbage queue.
func (s *Server) expireLoop() {
	defer s.done.Done()
	// Every url_ttl at most, and often enough that a reservation whose
	// body never came is given back soon after its expiry (every url_ttl
	// alone let one hold its quota for up to twice as long).
	t := time.NewTicker(min(s.opts.URLTTL, expireEvery))
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case now := <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), s.opts.URLTTL)
			s.cat.ExpireUploads(ctx, now) // errors: retried next tick
			s.cat.ExpireLocks(ctx, now)
			cancel()
		}
	}
}

// NewHTTPServer returns a fasthttp.Server configured for md: streamed
// request bodies (a proxied PUT is never buffered whole), the
// Expect: 100-continue hook that lets a PUT be redirected before its body
// is sent, no path normalization (md rejects ".." itself), and the
// timeouts of Options.Net. Serve it on a netguard listener (Serve does).
func (s *Server) NewHTTPServer() *fasthttp.Server {
	h := &fasthttp.Server{
		Handler:                       httperr.Recover(s.Handler(), s.finish),
		ExpectHandler:                 s.admitExpect,
		ErrorHandler:                  httperr.ReadError,
		Name:                          "shoal",
		StreamRequestBody:             true,
		DisablePreParseMultipartForm:  true,
		DisableHeaderNamesNormalizing: false,
		NoDefaultContentType:          true,
		NoDefaultDate:                 false,
		MaxRequestBodySize:            int(s.opts.MaxXMLBody), // only for buffered reads; streams are limited by md
		SecureErrorLogMessage:         true,                   // fasthttp's own errors must not quote headers (Authorization)
	}
	s.opts.Net.Apply(h)
	return h
}

// Serve answers requests on ln until Close.
func (s *Server) Serve(ln net.Listener) error {
	s.httpMu.Lock()
	if s.http == nil {
		s.http = s.NewHTTPServer()
	}
	h := s.http
	s.httpMu.Unlock()
	return h.Serve(netguard.Listen(ln, s.opts.Net.Limits))
}

// EndFollowing ends, with a "shutting down" error line, every admin
// command following a job through this md (the jobs go on), so that a
// shutdown does not wait for them. Close does it first.
func (s *Server) EndFollowing() { s.api.EndFollowing() }

// Close stops serving and the background loop. It does not close the
// catalog, which belongs to the caller.
func (s *Server) Close() error {
	s.once.Do(func() { close(s.stop) })
	s.api.EndFollowing()
	s.done.Wait()
	s.httpMu.Lock()
	h := s.http
	s.httpMu.Unlock()
	var err error
	if h != nil {
		err = h.Shutdown()
	}
	s.cancel() // after Shutdown: requests in flight finish their catalog calls
	return err
}
