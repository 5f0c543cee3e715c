package token

import (
	"crypto/x509"
	"fmt"
	"log/slog"
	"net/url"
	"time"
)

// Defaults of Config, and the range the operator may set key_refresh in.
const (
	DefaultKeyRefresh   = time.Hour
	MinKeyRefresh       = time.Hour
	MaxKeyRefresh       = 6 * time.Hour
	DefaultKeyKeep      = 48 * time.Hour
	DefaultKidRefetch   = time.Minute
	DefaultLeeway       = 60 * time.Second
	DefaultCacheTTL     = 5 * time.Minute
	DefaultCacheEntries = 10000
	DefaultFetchTimeout = 10 * time.Second
	// MaxTokenLen bounds a bearer token: real WLCG tokens with groups are
	// a few KiB.
	MaxTokenLen = 16 << 10
)

// IssuerConfig is one trusted token issuer, as it appears in the YAML
// config (a list under auth.issuers).
type IssuerConfig struct {
	// URL is the issuer (the iss claim), https.
	URL string `mapstructure:"url" yaml:"url"`
	// JWKSFile, when set, is read for the keys instead of OIDC discovery
	// (sites without outbound access); it is reread like a fetch.
	JWKSFile string `mapstructure:"jwks_file" yaml:"jwks_file"`
	// BasePath is where scope paths start in shoal's namespace: a token of
	// this issuer with storage.read:/x grants read on BASE/x. Default "/".
	BasePath string `mapstructure:"base_path" yaml:"base_path"`
	// Audiences this issuer's tokens may name besides the "any" value;
	// empty: Config.Audiences.
	Audiences []string `mapstructure:"audiences" yaml:"audiences"`
}

// Config sets up a Verifier. Zero durations and sizes take the defaults.
type Config struct {
	Issuers []IssuerConfig
	// Audiences accepted for issuers that list none: md's public URLs.
	Audiences []string
	// KeyRefresh is how old a key set gets before it is refetched (in the
	// background). Validate holds it to MinKeyRefresh..MaxKeyRefresh; New
	// takes any value so tests can be quick.
	KeyRefresh time.Duration
	// KeyKeep is how long the last good key set is used while the issuer
	// is unreachable.
	KeyKeep time.Duration
	// KidRefetch: a token naming an unknown kid refetches the keys at most
	// this often (failed fetches are retried no sooner either).
	KidRefetch time.Duration
	// Leeway for nbf and iat (clock skew). exp is strict.
	Leeway time.Duration
	// CacheTTL bounds how long a verified token is reused without a
	// signature check (never past its exp).
	CacheTTL     time.Duration
	CacheEntries int
	FetchTimeout time.Duration
	// RootCAs verify issuers' https certificates (nil: the system's).
	RootCAs *x509.CertPool
	// AllowHTTP lets loopback issuers be fetched over plain http (tests).
	AllowHTTP bool
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// Logger gets a line for each failed key fetch (nil: none).
	Logger *slog.Logger
}

// Validate checks what an operator can set, with the ranges the binary
// enforces.
func (c *Config) Validate() error {
	if c.KeyRefresh != 0 && (c.KeyRefresh < MinKeyRefresh || c.KeyRefresh > MaxKeyRefresh) {
		return fmt.Errorf("key_refresh %s: must be between %s and %s", c.KeyRefresh, MinKeyRefresh, MaxKeyRefresh)
	}
	return c.check()
}

// check is what New requires of any config.
func (c *Config) check() error {
	seen := map[string]bool{}
	for i, is := range c.Issuers {
		u, err := url.Parse(is.URL)
		if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
			return fmt.Errorf("issuers[%d].url %q: not an absolute URL", i, is.URL)
		}
		if u.Scheme == "http" && (!c.AllowHTTP || !isLoopback(u.Hostname())) {
			return fmt.Errorf("issuers[%d].url %q: https required", i, is.URL)
		}
		if seen[is.URL] {
			return fmt.Errorf("issuers[%d].url %q: listed twice", i, is.URL)
		}
		seen[is.URL] = true
		if is.BasePath != "" {
			if is.BasePath[0] != '/' {
				return fmt.Errorf("issuers[%d].base_path %q: must be absolute", i, is.BasePath)
			}
			if _, err := cleanScopePath(is.BasePath); err != nil {
				return fmt.Errorf("issuers[%d].base_path %q: %v", i, is.BasePath, err)
			}
		}
		if len(is.Audiences) == 0 && len(c.Audiences) == 0 {
			return fmt.Errorf("issuers[%d] %q: no audiences (set its audiences or md's public URLs)", i, is.URL)
		}
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"key_refresh", c.KeyRefresh}, {"key_keep", c.KeyKeep}, {"kid_refetch", c.KidRefetch}, {"leeway", c.Leeway}, {"cache_ttl", c.CacheTTL}, {"fetch_timeout", c.FetchTimeout}} {
		if d.v < 0 {
			return fmt.Errorf("%s %s: negative", d.name, d.v)
		}
	}
	return nil
}

func (c *Config) withDefaults() Config {
	d := *c
	set := func(p *time.Duration, v time.Duration) {
		if *p == 0 {
			*p = v
		}
	}
	set(&d.KeyRefresh, DefaultKeyRefresh)
	set(&d.KeyKeep, DefaultKeyKeep)
	set(&d.KidRefetch, DefaultKidRefetch)
	set(&d.Leeway, DefaultLeeway)
	set(&d.CacheTTL, DefaultCacheTTL)
	set(&d.FetchTimeout, DefaultFetchTimeout)
	if d.CacheEntries <= 0 {
		d.CacheEntries = DefaultCacheEntries
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	return d
}
