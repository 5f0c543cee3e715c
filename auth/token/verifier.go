// Package token verifies bearer tokens of the WLCG Common JWT Profile
// (v1.x) and SciTokens (2.0) against configured issuers, and turns a valid
// token into a shoal.Principal with its storage scopes and groups.
//
// Keys come by OpenID Connect discovery (or a JWKS file) and are cached
// per issuer; verified tokens are cached so the request path does no
// signature work for a token it has seen. Only RS256 and ES256 are
// accepted; a kid and exp are required.
//
// JOSE library: go-jose v4 rather than golang-jwt v5. go-jose makes the
// caller list the accepted algorithms at parse time (so "none" and HS256
// are refused before any key is looked at: no algorithm-confusion path),
// and it parses and validates JWK sets, which discovery needs and which
// golang-jwt leaves to hand-written RSA/EC key decoding. Claim checks
// (exp/nbf/iat leeway, both "any" audiences, wlcg.ver, scopes) are done
// here either way, since neither library knows the two profiles.
//
// The package must not import md, gw, diskserver or catalog.
package token

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"shoal"
)

const op = "token"

// algorithms are the only signature algorithms accepted.
var algorithms = []jose.SignatureAlgorithm{jose.RS256, jose.ES256}

// Verifier checks bearer tokens. It is safe for concurrent use.
type Verifier struct {
	cfg     Config
	issuers map[string]*issuer
	cache   *cache
}

type issuer struct {
	url       string
	base      string
	audiences []string
	keys      *issuerKeys
}

// New builds a Verifier. It reads every issuer's jwks_file, and a file
// that cannot be read or holds no usable key is an error: that issuer's
// every token would be refused. It fetches nothing over the network:
// keys are fetched by Prefetch, or when the first token of an issuer
// arrives.
func New(cfg Config) (*Verifier, error) {
	if err := cfg.check(); err != nil {
		return nil, shoal.E("token.New", shoal.KindInvalid, err)
	}
	c := cfg.withDefaults()
	v := &Verifier{cfg: c, issuers: map[string]*issuer{}, cache: newCache(c.CacheEntries)}
	f := newFetcher(c.FetchTimeout, c.RootCAs, c.AllowHTTP)
	for i, ic := range c.Issuers {
		is := &issuer{url: ic.URL, base: "/", audiences: ic.Audiences}
		if ic.BasePath != "" {
			is.base, _ = cleanScopePath(ic.BasePath)
		}
		if len(is.audiences) == 0 {
			is.audiences = c.Audiences
		}
		fetch := func(ctx context.Context) (*jose.JSONWebKeySet, error) { return f.fetchKeys(ctx, ic.URL) }
		if ic.JWKSFile != "" {
			path := ic.JWKSFile
			fetch = func(context.Context) (*jose.JSONWebKeySet, error) { return readKeyFile(path) }
		}
		is.keys = &issuerKeys{
			issuer: ic.URL,
			fetch:  fetch,
			now:    c.Now,
			log:    c.Logger,
			timing: keyTiming{refresh: c.KeyRefresh, keep: c.KeyKeep, kidRefetch: c.KidRefetch, timeout: c.FetchTimeout},
		}
		if ic.JWKSFile != "" {
			set, err := readKeyFile(ic.JWKSFile)
			if err != nil {
				return nil, shoal.E("token.New", shoal.KindInvalid, fmt.Errorf("issuers[%d].jwks_file: %w", i, err))
			}
			is.keys.seed(set)
		}
		v.issuers[ic.URL] = is
	}
	return v, nil
}

// Prefetch fetches the keys of every issuer without a jwks_file (OIDC
// discovery), all at once, and returns when each has succeeded or failed.
// A failure is logged, not an error: the network or the issuer may come
// up later, and the first token of that issuer fetches again.
func (v *Verifier) Prefetch(ctx context.Context) {
	var wg sync.WaitGroup
	for _, ic := range v.cfg.Issuers {
		if ic.JWKSFile != "" {
			continue
		}
		wg.Add(1)
		go func(k *issuerKeys) {
			defer wg.Done()
			k.prefetch(ctx)
		}(v.issuers[ic.URL].keys)
	}
	wg.Wait()
}

// Configured reports whether any issuer is configured (md then answers
// 401s with a Bearer challenge).
func (v *Verifier) Configured() bool { return len(v.issuers) > 0 }

// Verify checks a bearer token (the bytes after "Bearer ") and returns its
// principal. A token seen before and still valid is answered from the
// cache without allocating. Errors are *shoal.Error: KindUnauthorized for
// a token that is not acceptable (with a short reason that never quotes
// the token), KindUnavailable when the issuer's keys cannot be had.
func (v *Verifier) Verify(ctx context.Context, raw []byte) (*shoal.Principal, error) {
	now := v.cfg.Now()
	if p := v.cache.get(raw, now.UnixNano()); p != nil {
		return p, nil
	}
	p, exp, err := v.verify(ctx, string(raw), now)
	if err != nil {
		return nil, err
	}
	until := now.Add(v.cfg.CacheTTL)
	if exp.Before(until) {
		until = exp
	}
	v.cache.put(raw, p, until.UnixNano(), now.UnixNano())
	return p, nil
}

// verify is the full check of an untrusted token string.
func (v *Verifier) verify(ctx context.Context, raw string, now time.Time) (*shoal.Principal, time.Time, error) {
	fail := func(reason string) (*shoal.Principal, time.Time, error) {
		return nil, time.Time{}, shoal.Errorf(op, shoal.KindUnauthorized, "invalid token: %s", reason)
	}
	if len(raw) > MaxTokenLen {
		return fail("too long")
	}
	if strings.Count(raw, ".") != 2 {
		return fail("not a signed JWT")
	}
	tok, err := jwt.ParseSigned(raw, algorithms)
	if err != nil {
		// Also where "none", HS256 and every other algorithm end.
		return fail("malformed, or algorithm not RS256/ES256")
	}
	if len(tok.Headers) != 1 {
		return fail("not a single-signature JWT")
	}
	kid := tok.Headers[0].KeyID
	if kid == "" {
		return fail("no kid in header")
	}
	var unverified struct {
		Issuer string `json:"iss"`
	}
	if err := tok.UnsafeClaimsWithoutVerification(&unverified); err != nil {
		return fail("claims are not JSON")
	}
	is := v.issuers[unverified.Issuer]
	if is == nil {
		return fail("issuer not accepted here")
	}
	key, err := is.keys.key(ctx, kid)
	if err != nil {
		var nk errNoKeys
		if errors.As(err, &nk) {
			// Why (a path of md's, a dial error) is for md's log, where
			// the fetch wrote it; the client learns only what to retry.
			return nil, time.Time{}, shoal.Errorf(op, shoal.KindUnavailable, "keys of issuer %s unavailable (md's log says why); try again later", is.url)
		}
		return fail("signed with a key the issuer does not publish (kid)")
	}
	var c claims
	if err := tok.Claims(key, &c); err != nil {
		return fail("bad signature")
	}
	if c.Issuer != is.url {
		return fail("issuer mismatch")
	}
	if err := c.checkTimes(now, v.cfg.Leeway); err != nil {
		return fail(err.Error())
	}
	profile, err := c.profile()
	if err != nil {
		return fail(err.Error())
	}
	if err := c.checkAudience(profile, is.audiences); err != nil {
		return fail(err.Error())
	}
	if c.Subject == "" {
		return fail("no sub claim")
	}
	if !printable(c.Subject) {
		return fail("sub is over 256 bytes or holds control characters")
	}
	scopes, err := parseScopes(c.Scope, profile, is.base)
	if err != nil {
		return fail(err.Error())
	}
	p := &shoal.Principal{
		Kind:   shoal.PrincipalToken,
		ID:     "token:" + c.Subject + "@" + c.Issuer,
		Name:   c.Subject,
		Issuer: c.Issuer,
		Groups: c.Groups,
		Scopes: scopes,
	}
	return p, c.Expiry.Time(), nil
}

// printable keeps what goes into the principal's name (and so into logs)
// to one short line.
func printable(s string) bool {
	if len(s) > 256 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}
