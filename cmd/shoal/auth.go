package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"

	"shoal"
	"shoal/auth"
	"shoal/auth/rules"
	"shoal/auth/token"
	"shoal/auth/users"
	"shoal/cmd/shoal/config"
)

// This file turns the auth section of the config into md's auth.Auth,
// and holds the secure-by-default start check.

// checkExposure refuses, before anything starts, an md that would listen
// on a non-loopback address with no authentication configured (no
// issuer, no users file, no rule): it would serve anyone everything. The
// error names the keys to set. Rules granting anonymous rights are the
// operator saying so explicitly.
func checkExposure(c *config.Config) error {
	if c.Auth.Configured() {
		return nil
	}
	return auth.New(auth.Config{}).CheckListen(c.MD.Listen)
}

// newAuth builds md's identity and access from c.Auth. mdAddr is the
// address md listens on: with no auth.audiences, tokens must name one of
// md's own URLs (see defaultAudiences). With nothing configured (which
// checkExposure allows on loopback only) anonymous may do everything, as
// before shoal had identities. The users file is reread when it changes
// and on SIGHUP (rl).
func newAuth(ctx context.Context, c *config.Config, mdAddr net.Addr, rl *reloaders, log *slog.Logger) (*auth.Auth, error) {
	if err := checkExposure(c); err != nil {
		return nil, err
	}
	if !c.Auth.Configured() {
		log.Warn("no authentication configured (auth.issuers, auth.users_file, auth.rules): anyone who can reach md may read and write everything; md listens on loopback only", "listen", c.MD.Listen)
		return auth.New(auth.Config{Rules: rules.OpenAccess()}), nil
	}
	var cfg auth.Config
	var err error
	if cfg.Rules, err = rules.Compile(c.Auth.Rules); err != nil {
		return nil, err
	}
	if len(c.Auth.Issuers) > 0 {
		audiences := c.Auth.Audiences
		if len(audiences) == 0 {
			audiences = defaultAudiences(mdAddr)
			log.Info("tokens must name one of md's URLs as audience (set auth.audiences to the URLs clients use)", "audiences", audiences)
		}
		tc := token.Config{Issuers: c.Auth.Issuers, Audiences: audiences, KeyRefresh: c.Auth.KeyRefresh, Logger: log}
		if err := tc.Validate(); err != nil {
			return nil, fmt.Errorf("auth.%w", err)
		}
		if cfg.Tokens, err = token.New(tc); err != nil {
			// A jwks_file that cannot be read: name the key, as Validate does.
			var se *shoal.Error
			if errors.As(err, &se) && se.Err != nil {
				err = se.Err
			}
			return nil, fmt.Errorf("auth.%w", err)
		}
		// Discovery issuers unreachable now are a warning in the log, not a
		// start error: the network may come up after md.
		go cfg.Tokens.Prefetch(ctx)
	}
	if c.Auth.UsersFile != "" {
		if cfg.Users, err = users.Open(c.Auth.UsersFile); err != nil {
			return nil, fmt.Errorf("auth.users_file: %w", err)
		}
		go cfg.Users.Watch(ctx, 0, log)
		rl.add("users file "+c.Auth.UsersFile, cfg.Users.Reload)
		if cfg.Rules.Len() == 0 {
			log.Warn("auth.users_file is set but no auth.rules grant anything: users can sign in and do nothing (grant e.g. {path: /, who: authenticated, rights: [read, create, modify]})")
		}
	}
	return auth.New(cfg), nil
}

// defaultAudiences are md's own URLs, which a token may name as its
// audience when auth.audiences is empty: https and http on md's address,
// and on the machine's host name when md listens on every interface.
func defaultAudiences(a net.Addr) []string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok {
		return []string{"https://" + a.String()}
	}
	port := strconv.Itoa(tcp.Port)
	var hosts []string
	if tcp.IP == nil || tcp.IP.IsUnspecified() {
		if h, err := os.Hostname(); err == nil && h != "" {
			hosts = append(hosts, h)
		}
		hosts = append(hosts, "127.0.0.1")
	} else {
		hosts = append(hosts, tcp.IP.String())
	}
	var out []string
	for _, h := range hosts {
		hp := net.JoinHostPort(h, port)
		out = append(out, "https://"+hp, "http://"+hp)
		if port == "443" {
			out = append(out, "https://"+h)
		}
	}
	return out
}
