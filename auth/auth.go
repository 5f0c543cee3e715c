// Package auth is md's identity and access: it turns a request's
// Authorization header into a shoal.Principal (bearer token, HTTP Basic
// user, or anonymous) and decides whether that principal may apply a
// method to a path, from the token's storage scopes or the configured
// rules.
//
// Subpackages hold the parts: token (WLCG and SciTokens bearer tokens),
// users (the users file and Basic credentials), rules (path rules). md
// calls Authenticate then Authorize per request; both answer a credential
// or a decision seen before without allocating.
//
// The package must not import md, gw, diskserver or catalog.
package auth

import (
	"bytes"
	"context"

	"shoal"
	"shoal/auth/rules"
	"shoal/auth/token"
	"shoal/auth/users"
)

// Config is what Auth is built from; every part is optional.
type Config struct {
	// Tokens verifies bearer tokens (nil: none accepted).
	Tokens *token.Verifier
	// Users checks Basic credentials (nil: no local users).
	Users *users.Store
	// Rules grant rights to users, group tokens and anonymous (nil: none).
	Rules *rules.Rules
	// Realm names the service in WWW-Authenticate (default "shoal").
	Realm string
}

// Auth authenticates and authorizes md's requests. Safe for concurrent use.
type Auth struct {
	tokens *token.Verifier
	users  *users.Store
	rules  *rules.Rules
	chal   challenges
	counts counters
}

// New builds an Auth.
func New(cfg Config) *Auth {
	a := &Auth{tokens: cfg.Tokens, users: cfg.Users, rules: cfg.Rules}
	if a.rules == nil {
		a.rules = &rules.Rules{}
	}
	realm := cfg.Realm
	if realm == "" {
		realm = "shoal"
	}
	a.chal = newChallenges(realm, cfg.Users != nil)
	return a
}

// Rules are the rules in force.
func (a *Auth) Rules() *rules.Rules { return a.rules }

var (
	schemeBearer = []byte("bearer")
	schemeBasic  = []byte("basic")
)

// Authenticate turns the value of the Authorization header (nil or empty:
// none) into the request's principal. secure says the connection is TLS
// or from loopback: Basic credentials are refused otherwise, as they
// would have crossed the network in clear.
//
// A bad credential is an error even where anonymous would be allowed: a
// client that sent a token expects it to count. Errors are *shoal.Error:
// KindUnauthorized (answer 401 with Challenges), KindUnavailable when a
// token's issuer keys cannot be had (503).
func (a *Auth) Authenticate(ctx context.Context, authorization []byte, secure bool) (*shoal.Principal, error) {
	method, p, err := a.authenticate(ctx, authorization, secure)
	if err != nil {
		a.counts[method][statInvalid].Add(1)
	} else {
		a.counts[method][statOK].Add(1)
	}
	return p, err
}

func (a *Auth) authenticate(ctx context.Context, authorization []byte, secure bool) (int, *shoal.Principal, error) {
	h := bytes.TrimSpace(authorization)
	if len(h) == 0 {
		return statAnonymous, shoal.Anonymous, nil
	}
	scheme, cred, _ := bytes.Cut(h, []byte{' '})
	cred = bytes.TrimSpace(cred)
	switch {
	case bytes.EqualFold(scheme, schemeBearer):
		if a.tokens == nil {
			return statBearer, nil, shoal.Errorf("token", shoal.KindUnauthorized, "bearer tokens are not accepted here (no issuer configured)")
		}
		p, err := a.tokens.Verify(ctx, cred)
		return statBearer, p, err
	case bytes.EqualFold(scheme, schemeBasic):
		if a.users == nil {
			return statBasic, nil, shoal.Errorf("auth", shoal.KindUnauthorized, "Basic authentication is not enabled here (no users file)")
		}
		if !secure {
			return statBasic, nil, shoal.Errorf("auth", shoal.KindUnauthorized, "Basic authentication needs https")
		}
		p, err := a.users.Verify(cred)
		return statBasic, p, err
	}
	// Another scheme counts as anonymous: no credential shoal knows.
	return statAnonymous, nil, shoal.Errorf("auth", shoal.KindUnauthorized, "unsupported authorization scheme (want Bearer or Basic)")
}
