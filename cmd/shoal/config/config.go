// Package config is the configuration of the shoal binary: one typed
// struct with every key and its default, loaded by viper from a YAML file,
// SHOAL_* environment variables and cobra flags, validated at the edge and
// then passed down as plain values.
//
// It imports no server package (only internal/netguard and the auth parsers
// for the types they configure): the binary builds servers from it.
package config

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"shoal"
	"shoal/auth/rules"
	"shoal/auth/token"
	"shoal/internal/netguard"
)

// Config is every setting of every shoal command, in one place. Each leaf
// is a config-file key (its mapstructure path, e.g. md.data_mode), a
// SHOAL_* environment variable (SHOAL_MD_DATA_MODE) and, for the commands
// that use it, a flag. The doc tag is the one-line comment printed by
// `shoal config defaults`; Defaults holds the values.
//
// Precedence, highest first: flag, environment, config file, default.
type Config struct {
	SecretFile      string        `mapstructure:"secret_file" doc:"cluster secret file (\"KID SECRET\" per line, first signs); shoal all creates DATA/secret when empty"`
	SignMaxLifetime time.Duration `mapstructure:"sign_max_lifetime" doc:"longest validity of a signed URL or internal call that md, data servers and gws accept (md.url_ttl must fit in it)"`
	Log             LogConfig     `mapstructure:"log" doc:"logging (log/slog, to stderr)"`
	All             AllConfig     `mapstructure:"all" doc:"shoal all: md + one data server + SQLite in one process"`
	MD              MDConfig      `mapstructure:"md" doc:"metadata frontend (shoal md, shoal all)"`
	Catalog         CatalogConfig `mapstructure:"catalog" doc:"SQL catalog used by md"`
	Cache           CacheConfig   `mapstructure:"cache" doc:"caches in front of the catalog's read path"`
	Disk            DiskConfig    `mapstructure:"disk" doc:"data server (shoal disk, shoal all)"`
	GW              GWConfig      `mapstructure:"gw" doc:"gateway for ec:K+M files and replica:N writes (shoal gw; shoal all with gw.listen)"`
	Jobs            JobsConfig    `mapstructure:"jobs" doc:"admin jobs (repair, drain, scrub, fsck): the runner beside each md (shoal md, shoal all)"`
	TLS             TLSConfig     `mapstructure:"tls" doc:"https on every listener, and the CA md, data servers and gws verify each other against"`
	Admin           AdminConfig   `mapstructure:"admin" doc:"shoal admin"`
	Net             NetConfig     `mapstructure:"net" doc:"every listener (md public and internal, disk, gw): timeouts against slow and idle clients, connection caps"`
	Auth            AuthConfig    `mapstructure:"auth" doc:"identity and access, enforced by md (see README, Security model); nothing set: md on loopback serves anyone everything, elsewhere it refuses to start"`
	TPC             TPCConfig     `mapstructure:"tpc" doc:"third-party copy (WLCG HTTP-TPC: COPY with Source, or a Destination on another server): md, data servers and gws as the active side"`
}

type NetConfig struct {
	ReadHeaderTimeout time.Duration `mapstructure:"read_header_timeout" doc:"a request's headers (and small bodies md buffers) must arrive within this"`
	IdleTimeout       time.Duration `mapstructure:"idle_timeout" doc:"a keep-alive connection without a request for this long is closed"`
	ReadIdleTimeout   time.Duration `mapstructure:"read_idle_timeout" doc:"an upload that sends nothing for this long is cut (no limit on its total length); also md's transfers to data servers"`
	WriteIdleTimeout  time.Duration `mapstructure:"write_idle_timeout" doc:"a download whose client reads nothing for this long is cut (no limit on its total length)"`
	MaxConns          int           `mapstructure:"max_conns" doc:"open connections per listener; more are answered 503 with Retry-After and closed"`
	MaxHeaderBytes    Size          `mapstructure:"max_header_bytes" doc:"largest request line and headers a listener reads (431 beyond): room for long paths, signed URLs and bearer tokens"`
	MaxConnsPerIP     int           `mapstructure:"max_conns_per_ip" doc:"open connections per listener from one client address (md proxying is one address to a data server)"`
}

type LogConfig struct {
	Level  string `mapstructure:"level" doc:"debug, info, warn or error"`
	Format string `mapstructure:"format" doc:"text or json"`
	Access bool   `mapstructure:"access" doc:"one info line per request (md, data servers, gws): request id, principal, method, path, status, bytes, duration; md's audit lines for mutations are always written"`
}

type AllConfig struct {
	Data      []string `mapstructure:"data" doc:"data directories, one per disk: the first holds catalog.db, secret and tls/; each holds a data server's disk/ (several: one data server each and an in-process gw)"`
	Layout    string   `mapstructure:"layout" doc:"layout of the default pool set at start, e.g. ec:2+1 or replica:2 across several --data directories (empty: leave the pool as it is)"`
	TLS       bool     `mapstructure:"tls" doc:"serve md and the data server over https; without tls.md_cert_file, with a private CA and server certificate made once under DATA/tls"`
	LocalData bool     `mapstructure:"local_data" doc:"md serves the files of its own data server itself (GET with sendfile, no redirect) and writes uploads placed there itself (no 307, no commit hop); false: every GET and PUT goes through the data server's URL, as in a cluster"`
}

type MDConfig struct {
	Listen             string        `mapstructure:"listen" doc:"HOST:PORT md answers HTTP/WebDAV on"`
	DataMode           string        `mapstructure:"data_mode" doc:"auto, redirect or proxy: how GET/PUT bytes reach data servers"`
	InlineMax          Size          `mapstructure:"inline_max" doc:"files up to this size are stored in the catalog and served by md (0: never)"`
	URLTTL             time.Duration `mapstructure:"url_ttl" doc:"lifetime of the signed data-server URLs md redirects to"`
	NoRedirectAgents   []string      `mapstructure:"no_redirect_agents" doc:"User-Agent substrings of clients that cannot follow redirects (auto mode proxies their GETs)"`
	ServerTTL          time.Duration `mapstructure:"server_ttl" doc:"a data server is live while its last heartbeat is younger than this (time md's catalog was failing does not count)"`
	ProbeInterval      time.Duration `mapstructure:"probe_interval" doc:"how often md checks that each live data server and gw answers; one that does not gets no writes, and reads only when no other replica is left, until it heartbeats again (0: off, where md cannot reach the servers' public URLs)"`
	ReusePort          bool          `mapstructure:"reuseport" doc:"listen with SO_REUSEPORT so several md processes share one port"`
	ShutdownTimeout    time.Duration `mapstructure:"shutdown_timeout" doc:"on SIGINT/SIGTERM, how long in-flight requests may take to finish"`
	AllowPoolProppatch bool          `mapstructure:"allow_pool_proppatch" doc:"let any client that may PROPPATCH a collection (create or modify on it) map it to a pool with PROPPATCH of shoal:pool (off: placement is the operator's, shoal admin pool set)"`
	DegradedWrites     bool          `mapstructure:"degraded_writes" doc:"let an ec:K+M write go ahead on K+M' servers (at least K+1) when fewer than K+M are live; shoal admin repair adds the missing shards later (off: such a write fails with 503 and Retry-After while servers are down)"`
	ActiveContent      string        `mapstructure:"active_content" doc:"how md serves stored HTML, SVG, XHTML and JavaScript: sandbox (Content-Security-Policy: sandbox) or attachment (Content-Disposition: attachment)"`
	AllowedHosts       []string      `mapstructure:"allowed_hosts" doc:"Host names md answers to (empty: any); other requests get 400"`
	MaxXMLBody         Size          `mapstructure:"max_xml_body" doc:"largest PROPFIND, PROPPATCH or LOCK body (413 beyond)"`
	MaxInternalBody    Size          `mapstructure:"max_internal_body" doc:"largest body of a call to md's internal API (commits, heartbeats, admin requests), read only once its signature checks"`
	MaxPutBody         Size          `mapstructure:"max_put_body" doc:"largest file a PUT may write (413 beyond; 0: no limit but the disks)"`
	ChunkedReserve     Size          `mapstructure:"chunked_reserve" doc:"what a PUT of unknown length (chunked) reserves on the quotas over its path (less if they have less left), and the most it may write there: the data server cuts it (413); outside quotas only max_put_body bounds it"`
	UploadTTL          time.Duration `mapstructure:"upload_ttl" doc:"an upload's reservation lives this long past the last heartbeat of the data server receiving it (one whose body never comes: url_ttl + server_ttl)"`
	MaxPendingUploads  int           `mapstructure:"max_pending_uploads" doc:"reservations one client (principal, or address when anonymous) may hold at once; more PUTs get 429"`
	LockTimeout        time.Duration `mapstructure:"lock_timeout" doc:"longest WebDAV lock a client may take; longer (or Infinite) requests get this"`
	MaxLockOwner       Size          `mapstructure:"max_lock_owner" doc:"largest <D:owner> of a LOCK (400 beyond)"`
	LocksPerPrincipal  int           `mapstructure:"locks_per_principal" doc:"WebDAV locks one principal may hold at once (503 beyond)"`
	LocksTotal         int           `mapstructure:"locks_total" doc:"WebDAV locks held at once in the whole namespace (503 beyond)"`
}

type CatalogConfig struct {
	DSN             string        `mapstructure:"dsn" doc:"sqlite:PATH or mysql://USER:PASS@HOST:PORT/DB (shoal all: sqlite:DATA/catalog.db)"`
	MaxOpenConns    int           `mapstructure:"max_open_conns" doc:"connection pool size (0: MySQL 16; SQLite readers GOMAXPROCS, at least 4, each with a page cache of up to 2 MiB)"`
	MaxIdleConns    int           `mapstructure:"max_idle_conns" doc:"idle connections kept open (0: max_open_conns)"`
	ConnMaxLifetime time.Duration `mapstructure:"conn_max_lifetime" doc:"connections are recycled after this"`
	BusyTimeout     time.Duration `mapstructure:"busy_timeout" doc:"SQLite: how long a writer waits for the lock"`
	CallTimeout     time.Duration `mapstructure:"call_timeout" doc:"MySQL: the longest one query, or one attempt of a write transaction, may take, waiting for a connection included; past it md answers 503 (a hung server, or a network that drops packets). Waits for a large tree operation do not count"`
	GroupCommit     bool          `mapstructure:"group_commit" doc:"concurrent writes share one SQL transaction and one durable commit (each in its own savepoint)"`
	WriteBatches    int           `mapstructure:"write_batches" doc:"MySQL: shared write transactions in flight at once, each on its own connection (SQLite: always 1)"`
}

type CacheConfig struct {
	L1          string        `mapstructure:"l1" doc:"in-process tier: auto (on unless memcached is set), on or off"`
	L1TTL       time.Duration `mapstructure:"l1_ttl" doc:"in-process entries live this long: the staleness bound across md replicas"`
	L1Entries   int           `mapstructure:"l1_entries" doc:"in-process tier capacity, in entries"`
	Memcached   []string      `mapstructure:"memcached" doc:"memcached servers HOST:PORT shared by all md replicas (empty: none)"`
	TTL         time.Duration `mapstructure:"ttl" doc:"lifetime of a cached answer in memcached"`
	NegativeTTL time.Duration `mapstructure:"negative_ttl" doc:"lifetime of a cached \"no such path\" answer, both tiers"`
	Timeout     time.Duration `mapstructure:"timeout" doc:"per memcached operation; past it the catalog answers"`
	KeyPrefix   string        `mapstructure:"key_prefix" doc:"prefix of every memcached key, so several namespaces can share memcached"`
}

type DiskConfig struct {
	Listen    string        `mapstructure:"listen" doc:"HOST:PORT the data server listens on (empty: shoal all uses md's host and port + 1, shoal disk 127.0.0.1:8081)"`
	Data      []string      `mapstructure:"data" doc:"data directories, one per filesystem (shoal all: DATA/disk)"`
	MD        string        `mapstructure:"md" doc:"md base URL the data server commits and heartbeats to"`
	PublicURL string        `mapstructure:"public_url" doc:"base URL clients are redirected to (empty: http://LISTEN)"`
	ID        string        `mapstructure:"id" doc:"stable server id (empty: a random id made once and kept in the first data directory)"`
	Pool      string        `mapstructure:"pool" doc:"pool the server belongs to"`
	Heartbeat time.Duration `mapstructure:"heartbeat" doc:"interval between heartbeats to md (a failed one is retried sooner, with backoff)"`
	MaxBody   Size          `mapstructure:"max_body" doc:"largest object a PUT may store on this data server (413 beyond)"`
	Reserve   Size          `mapstructure:"reserve" doc:"free space each data directory keeps for its filesystem: writes that would eat into it get 507, and a disk down to it is full (healthz 503); 0: none"`
	PackMax   Size          `mapstructure:"pack_max" doc:"objects up to this size that md in shoal all writes into its own data server are kept many to a pack file, one record each, instead of a file each (a create then costs a write and a share of one fdatasync); 0: never (at most 255KiB)"`
	MD5       bool          `mapstructure:"md5" doc:"objects written to a data server (in packs or as files) get an MD5 besides their adler32, for Want-Digest: md5; off, they have the adler32 alone (the WLCG default), and creates of 1MiB ran 1.3 times as fast: MD5 costs more CPU than writing the bytes. Files kept inline in the catalog always have one"`
	Garbage   time.Duration `mapstructure:"garbage_interval" doc:"how often the data server removes the objects md queued as garbage (deleted or overwritten files, expired uploads)"`
}

type GWConfig struct {
	Listen     string        `mapstructure:"listen" doc:"HOST:PORT the gw listens on (shoal gw: 127.0.0.1:8082 when empty; shoal all starts a gw only when set)"`
	MD         string        `mapstructure:"md" doc:"md base URL the gw commits to, heartbeats to and gets the data-server list from"`
	PublicURL  string        `mapstructure:"public_url" doc:"base URL md redirects clients to (empty: http://LISTEN)"`
	ID         string        `mapstructure:"id" doc:"gw id reported to md (empty: gw-HOST:PORT)"`
	MaxBody    Size          `mapstructure:"max_body" doc:"largest file a PUT through the gw may store (413 beyond)"`
	StripeSize Size          `mapstructure:"stripe_size" doc:"user bytes per erasure-coded stripe (memory per PUT is about two stripes)"`
	Heartbeat  time.Duration `mapstructure:"heartbeat" doc:"interval between heartbeats to md (a failed one is retried sooner, with backoff)"`
}

type JobsConfig struct {
	Run   bool          `mapstructure:"run" doc:"run admin jobs in this process (off: this md only records and follows them; another md runs them)"`
	Lease time.Duration `mapstructure:"lease" doc:"a job stays its runner's this long after the runner's last heartbeat (every lease/4, at most 1s): a job whose md died is taken over and resumed by another md this long after"`
	Keep  time.Duration `mapstructure:"keep" doc:"a job that ended (done, failed, cancelled) is listed this long, then the runners delete it with its result (0: keep every job)"`
}

type AdminConfig struct {
	MD      string        `mapstructure:"md" doc:"md base URL admin commands talk to"`
	Timeout time.Duration `mapstructure:"timeout" doc:"how long an admin command waits for an answer from md (long operations send progress every second: this bounds silence, not their length)"`
}

// AuthConfig is md's identity and access. The lists (issuers, rules) are
// set in the config file only; the rest also by SHOAL_AUTH_* variables.
type AuthConfig struct {
	Issuers    []token.IssuerConfig `mapstructure:"issuers" doc:"trusted bearer-token issuers (WLCG, SciTokens), each {url: https://…, jwks_file: keys from a file instead of OIDC discovery, base_path: where its scope paths start, audiences: […]} (empty: no tokens accepted)"`
	Audiences  []string             `mapstructure:"audiences" doc:"audiences a token must name (or the WLCG/SciTokens \"any\" value) for issuers listing none (empty: md's own URLs)"`
	KeyRefresh time.Duration        `mapstructure:"key_refresh" doc:"how often issuers' keys are refetched (1h to 6h; the last good keys are kept 48h while an issuer is down)"`
	UsersFile  string               `mapstructure:"users_file" doc:"local users for HTTP Basic (NAME:BCRYPT-HASH[:GROUPS] per line; shoal admin user add); reread when it changes and on SIGHUP (empty: none)"`
	Rules      []rules.Rule         `mapstructure:"rules" doc:"rights granted to users, group tokens and anonymous, each {path: /p, who: anonymous|authenticated|user:NAME|group:NAME|issuer:URL, rights: [read, create, modify]}"`
}

// Configured reports whether any identity or rule is configured.
func (a *AuthConfig) Configured() bool {
	return len(a.Issuers) > 0 || a.UsersFile != "" || len(a.Rules) > 0
}

// Defaults is the configuration with nothing set.
func Defaults() Config {
	return Config{
		SignMaxLifetime: time.Hour,
		All:             AllConfig{LocalData: true},
		Log:             LogConfig{Level: "info", Format: "text", Access: true},
		MD: MDConfig{
			Listen:            "127.0.0.1:8080",
			DataMode:          "auto",
			InlineMax:         4 * KiB,
			URLTTL:            time.Minute,
			NoRedirectAgents:  []string{"Microsoft-WebDAV-MiniRedir", "litmus", "davfs2", "gvfs", "gio/", "neon/"},
			ServerTTL:         10 * time.Second,
			ProbeInterval:     500 * time.Millisecond,
			ShutdownTimeout:   30 * time.Second,
			ActiveContent:     "sandbox",
			MaxXMLBody:        1 * MiB,
			MaxInternalBody:   256 * KiB,
			UploadTTL:         2 * time.Minute,
			MaxPendingUploads: 256,
			LockTimeout:       time.Hour,
			MaxLockOwner:      4 * KiB,
			LocksPerPrincipal: 100,
			LocksTotal:        10_000,
			ChunkedReserve:    1 * GiB,
		},
		Catalog: CatalogConfig{
			MaxOpenConns:    0, // per dialect: catalog.DefaultMaxOpenConns, catalog.SQLiteReaders
			MaxIdleConns:    0, // as many as MaxOpenConns
			ConnMaxLifetime: 5 * time.Minute,
			BusyTimeout:     10 * time.Second,
			CallTimeout:     30 * time.Second,
			GroupCommit:     true,
			WriteBatches:    4,
		},
		Cache: CacheConfig{
			L1:          "auto",
			L1TTL:       5 * time.Second,
			L1Entries:   100_000,
			TTL:         5 * time.Minute,
			NegativeTTL: 10 * time.Second,
			Timeout:     100 * time.Millisecond,
			KeyPrefix:   "shoal:",
		},
		Disk: DiskConfig{
			Pool:      "default",
			Heartbeat: 2 * time.Second,
			Reserve:   64 * MiB,
			PackMax:   64 * KiB,
			Garbage:   30 * time.Second,
			MaxBody:   64 * GiB,
		},
		GW: GWConfig{
			MaxBody:    64 * GiB,
			StripeSize: 1 * MiB,
			Heartbeat:  2 * time.Second,
		},
		Jobs:  JobsConfig{Run: true, Lease: 30 * time.Second, Keep: 30 * 24 * time.Hour},
		TLS:   TLSConfig{MinVersion: "1.2", Watch: 5 * time.Second},
		Admin: AdminConfig{MD: "http://127.0.0.1:8080", Timeout: 10 * time.Minute},
		Net: NetConfig{
			ReadHeaderTimeout: 20 * time.Second,
			IdleTimeout:       time.Minute,
			ReadIdleTimeout:   time.Minute,
			WriteIdleTimeout:  time.Minute,
			MaxConns:          2048,
			MaxConnsPerIP:     512,
			MaxHeaderBytes:    16 * KiB,
		},
		Auth: AuthConfig{KeyRefresh: token.DefaultKeyRefresh},
		TPC:  TPCDefaults(),
	}
}

// Validate reports the first setting that cannot work, naming its key.
// CheckHeartbeats refuses, for the servers a command runs (a data server,
// a gw), a heartbeat interval over a third of md.server_ttl: md takes a
// server for down once its last heartbeat is older than the TTL, so one
// heartbeat late (or lost) must not be enough. With the two equal, the
// only data server of a Pi looked down just before each heartbeat and
// writes failed with 503 every 10 s. A data server's config names the TTL
// of the md it reports to (the default unless set); shoal md, which
// beats for no one, is not checked.
func (c *Config) CheckHeartbeats(disk, gw bool) error {
	if disk {
		if err := heartbeatWithin("disk.heartbeat", c.Disk.Heartbeat, c.MD.ServerTTL); err != nil {
			return err
		}
	}
	if gw {
		return heartbeatWithin("gw.heartbeat", c.GW.Heartbeat, c.MD.ServerTTL)
	}
	return nil
}

func heartbeatWithin(key string, hb, ttl time.Duration) error {
	if hb > 0 && ttl > 0 && 3*hb > ttl {
		return fmt.Errorf("%s: %v is more than a third of md.server_ttl (%v): md would take the server for down between heartbeats; lower it or raise md.server_ttl (on md, and here)", key, hb, ttl)
	}
	return nil
}

func (c *Config) Validate() error {
	oneOf := func(key, v string, allowed ...string) error {
		for _, a := range allowed {
			if v == a {
				return nil
			}
		}
		return fmt.Errorf("%s: %q is not one of %s", key, v, strings.Join(allowed, ", "))
	}
	positive := func(key string, d time.Duration) error {
		if d <= 0 {
			return fmt.Errorf("%s: %v must be positive", key, d)
		}
		return nil
	}
	checks := []error{
		oneOf("log.level", c.Log.Level, "debug", "info", "warn", "error"),
		oneOf("log.format", c.Log.Format, "text", "json"),
		oneOf("md.data_mode", c.MD.DataMode, "auto", "redirect", "proxy"),
		oneOf("cache.l1", c.Cache.L1, "auto", "on", "off"),
		oneOf("md.active_content", c.MD.ActiveContent, "sandbox", "attachment"),
		hostPort("md.listen", c.MD.Listen),
		hostPort("disk.listen", c.Disk.Listen),
		positive("md.url_ttl", c.MD.URLTTL),
		positive("sign_max_lifetime", c.SignMaxLifetime),
		positive("md.server_ttl", c.MD.ServerTTL),
		positive("md.shutdown_timeout", c.MD.ShutdownTimeout),
		positive("md.lock_timeout", c.MD.LockTimeout),
		positive("md.upload_ttl", c.MD.UploadTTL),
		positive("catalog.conn_max_lifetime", c.Catalog.ConnMaxLifetime),
		positive("catalog.busy_timeout", c.Catalog.BusyTimeout),
		positive("catalog.call_timeout", c.Catalog.CallTimeout),
		positive("cache.l1_ttl", c.Cache.L1TTL),
		positive("cache.ttl", c.Cache.TTL),
		positive("cache.negative_ttl", c.Cache.NegativeTTL),
		positive("cache.timeout", c.Cache.Timeout),
		positive("disk.heartbeat", c.Disk.Heartbeat),
		positive("disk.garbage_interval", c.Disk.Garbage),
		positive("admin.timeout", c.Admin.Timeout),
		positive("net.read_header_timeout", c.Net.ReadHeaderTimeout),
		positive("net.idle_timeout", c.Net.IdleTimeout),
		positive("net.read_idle_timeout", c.Net.ReadIdleTimeout),
		positive("net.write_idle_timeout", c.Net.WriteIdleTimeout),
		positive("jobs.lease", c.Jobs.Lease),
		positive("gw.heartbeat", c.GW.Heartbeat),
		hostPort("gw.listen", c.GW.Listen),
		httpURL("gw.md", c.GW.MD),
		httpURL("gw.public_url", c.GW.PublicURL),
		httpURL("disk.md", c.Disk.MD),
		httpURL("disk.public_url", c.Disk.PublicURL),
		httpURL("admin.md", c.Admin.MD),
		c.TLS.validate(),
	}
	for _, err := range checks {
		if err != nil {
			return err
		}
	}
	if c.MD.InlineMax < 0 || c.MD.InlineMax > 1*MiB {
		return fmt.Errorf("md.inline_max: %v must be between 0 and 1MiB", c.MD.InlineMax)
	}
	if c.GW.StripeSize < 4*KiB || c.GW.StripeSize > 256*MiB {
		return fmt.Errorf("gw.stripe_size: %v must be between 4KiB and 256MiB", c.GW.StripeSize)
	}
	if c.Catalog.MaxOpenConns < 0 || c.Catalog.MaxIdleConns < 0 {
		return fmt.Errorf("catalog.max_open_conns and catalog.max_idle_conns must be at least 0 (0: the default)")
	}
	if c.MD.URLTTL > c.SignMaxLifetime {
		return fmt.Errorf("md.url_ttl: %v is longer than sign_max_lifetime (%v): data servers would refuse md's URLs", c.MD.URLTTL, c.SignMaxLifetime)
	}
	if c.MD.MaxInternalBody < 16*KiB || c.MD.MaxInternalBody > 64*MiB {
		return fmt.Errorf("md.max_internal_body: %v must be between 16KiB and 64MiB", c.MD.MaxInternalBody)
	}
	if c.MD.MaxXMLBody < 1*KiB || c.MD.MaxXMLBody > 64*MiB {
		return fmt.Errorf("md.max_xml_body: %v must be between 1KiB and 64MiB", c.MD.MaxXMLBody)
	}
	if c.Catalog.WriteBatches < 1 || c.Catalog.WriteBatches > 64 {
		return fmt.Errorf("catalog.write_batches: %d must be between 1 and 64", c.Catalog.WriteBatches)
	}
	if c.MD.MaxPendingUploads < 1 {
		return fmt.Errorf("md.max_pending_uploads: %d must be at least 1", c.MD.MaxPendingUploads)
	}
	if c.MD.ProbeInterval < 0 {
		return fmt.Errorf("md.probe_interval: %v must be at least 0 (0: off)", c.MD.ProbeInterval)
	}
	if c.MD.ChunkedReserve < 1 {
		return fmt.Errorf("md.chunked_reserve: %v must be at least 1 byte", c.MD.ChunkedReserve)
	}
	// The data server reads a packed body whole into one of its 256 KiB
	// copy buffers (diskserver.MaxPackMax).
	if c.Disk.PackMax < 0 || c.Disk.PackMax > 255*KiB {
		return fmt.Errorf("disk.pack_max: %v must be between 0 (never) and 255KiB", c.Disk.PackMax)
	}
	if c.Jobs.Keep < 0 {
		return fmt.Errorf("jobs.keep: %v must be at least 0 (0: keep every job)", c.Jobs.Keep)
	}
	if c.Disk.Reserve < 0 {
		return fmt.Errorf("disk.reserve: %v must be at least 0 (0: none)", c.Disk.Reserve)
	}
	if c.MD.MaxPutBody < 0 {
		return fmt.Errorf("md.max_put_body: %v must be at least 0 (0: no limit)", c.MD.MaxPutBody)
	}
	if c.MD.MaxLockOwner < 64 || c.MD.MaxLockOwner > 1*MiB {
		return fmt.Errorf("md.max_lock_owner: %v must be between 64B and 1MiB", c.MD.MaxLockOwner)
	}
	if c.MD.LocksPerPrincipal < 1 || c.MD.LocksTotal < c.MD.LocksPerPrincipal {
		return fmt.Errorf("md.locks_per_principal and md.locks_total: want 1 <= locks_per_principal <= locks_total")
	}
	if c.Net.MaxHeaderBytes < 4*KiB || c.Net.MaxHeaderBytes > 1*MiB {
		return fmt.Errorf("net.max_header_bytes: %v must be between 4KiB and 1MiB", c.Net.MaxHeaderBytes)
	}
	if c.Disk.MaxBody < 1 || c.GW.MaxBody < 1 {
		return fmt.Errorf("disk.max_body and gw.max_body must be positive")
	}
	if c.Net.MaxConns < 1 || c.Net.MaxConnsPerIP < 1 || c.Net.MaxConnsPerIP > c.Net.MaxConns {
		return fmt.Errorf("net.max_conns and net.max_conns_per_ip: want 1 <= max_conns_per_ip <= max_conns")
	}
	if c.Cache.L1Entries < 1 {
		return fmt.Errorf("cache.l1_entries: %d must be at least 1", c.Cache.L1Entries)
	}
	if c.Catalog.DSN != "" && !strings.HasPrefix(c.Catalog.DSN, "sqlite:") && !strings.HasPrefix(c.Catalog.DSN, "mysql://") {
		return fmt.Errorf("catalog.dsn: want sqlite:PATH or mysql://USER:PASS@HOST:PORT/DB")
	}
	for _, m := range c.Cache.Memcached {
		if err := hostPort("cache.memcached", m); err != nil || m == "" {
			return fmt.Errorf("cache.memcached: %q is not HOST:PORT", m)
		}
	}
	if c.Cache.KeyPrefix == "" || len(c.Cache.KeyPrefix) > 64 || strings.ContainsAny(c.Cache.KeyPrefix, " \t\r\n") {
		return fmt.Errorf("cache.key_prefix: %q must be 1-64 characters without spaces", c.Cache.KeyPrefix)
	}
	if err := shoal.CheckPoolName(c.Disk.Pool); err != nil {
		return fmt.Errorf("disk.pool: %w", err)
	}
	if err := c.TPC.validate(); err != nil {
		return err
	}
	return c.Auth.validate()
}

// validate checks the auth section as far as it can without files or
// network: rules compile, issuers are well-formed, key_refresh is in
// range. Errors name the key (auth.rules[2], auth.issuers[0].url).
func (a *AuthConfig) validate() error {
	if _, err := rules.Compile(a.Rules); err != nil {
		return err // already "auth.rules[i]: …"
	}
	for i, aud := range a.Audiences {
		if strings.TrimSpace(aud) == "" {
			return fmt.Errorf("auth.audiences[%d]: empty", i)
		}
	}
	tc := token.Config{Issuers: a.Issuers, Audiences: a.Audiences, KeyRefresh: a.KeyRefresh}
	if len(tc.Audiences) == 0 {
		tc.Audiences = []string{"md's URLs"} // the default, known once md listens
	}
	if a.KeyRefresh == 0 {
		return fmt.Errorf("auth.key_refresh: must be between %v and %v", token.MinKeyRefresh, token.MaxKeyRefresh)
	}
	if err := tc.Validate(); err != nil {
		return fmt.Errorf("auth.%w", err)
	}
	return nil
}

// hostPort accepts "" (unset) or HOST:PORT with a numeric port.
func hostPort(key, addr string) error {
	if addr == "" {
		return nil
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%s: %q: want HOST:PORT", key, addr)
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return fmt.Errorf("%s: %q: bad port", key, addr)
	}
	return nil
}

// httpURL accepts "" (unset) or an absolute http(s) URL.
func httpURL(key, s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s: %q: want http://HOST:PORT", key, s)
	}
	return nil
}

// normalize makes empty lists nil, so a config read back from a file
// compares equal to Defaults.
func (c *Config) normalize() {
	lists := []*[]string{&c.MD.NoRedirectAgents, &c.Cache.Memcached, &c.Disk.Data, &c.MD.AllowedHosts, &c.Auth.Audiences, &c.All.Data, &c.TPC.Deny, &c.TPC.LocalURLs}
	for i := range c.Auth.Issuers {
		lists = append(lists, &c.Auth.Issuers[i].Audiences)
	}
	for i := range c.Auth.Rules {
		lists = append(lists, &c.Auth.Rules[i].Rights)
	}
	for _, l := range lists {
		if len(*l) == 0 {
			*l = nil
		}
	}
	if len(c.Auth.Issuers) == 0 {
		c.Auth.Issuers = nil
	}
	if len(c.Auth.Rules) == 0 {
		c.Auth.Rules = nil
	}
}

// Guard is the listener configuration every server applies.
func (n NetConfig) Guard() netguard.Config {
	return netguard.Config{ReadHeader: n.ReadHeaderTimeout, Idle: n.IdleTimeout, MaxHeaderBytes: int(n.MaxHeaderBytes), Limits: netguard.Limits{
		MaxConns: n.MaxConns, MaxConnsPerIP: n.MaxConnsPerIP, ReadIdle: n.ReadIdleTimeout, WriteIdle: n.WriteIdleTimeout}}
}
