package token

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// errUnknownKid is a token signed with a key its issuer does not (yet)
// publish.
var errUnknownKid = errors.New("unknown kid")

// errNoKeys means the issuer's keys could not be had at all: neither a
// fresh fetch nor a set young enough to keep.
type errNoKeys struct{ err error }

func (e errNoKeys) Error() string { return "issuer keys unavailable: " + e.err.Error() }
func (e errNoKeys) Unwrap() error { return e.err }

// keyTiming is how an issuer's key set is kept.
type keyTiming struct {
	refresh    time.Duration // a set older than this is refetched in the background
	keep       time.Duration // a set older than this is dropped (issuer unreachable that long)
	kidRefetch time.Duration // an unknown kid (or a failed fetch) refetches at most this often
	timeout    time.Duration // one fetch
}

// issuerKeys is one issuer's key set: fetched on first use, refreshed in
// the background when old, kept while the issuer is unreachable, refetched
// (rate-limited) when a token names a kid it does not hold.
type issuerKeys struct {
	issuer string // its URL, for the log
	fetch  func(context.Context) (*jose.JSONWebKeySet, error)
	timing keyTiming
	now    func() time.Time
	// log gets one line per failed fetch (so at most one per kidRefetch
	// and per refresh): a client only learns the keys are unavailable,
	// the operator why.
	log *slog.Logger

	fetchMu sync.Mutex // one fetch at a time per issuer

	mu         sync.Mutex
	set        *jose.JSONWebKeySet
	fetchedAt  time.Time // when set was fetched
	lastTry    time.Time // last fetch attempt, good or bad
	lastErr    error     // error of the last attempt, nil if good
	refreshing bool
}

// key returns the public key named kid.
func (k *issuerKeys) key(ctx context.Context, kid string) (any, error) {
	now := k.now()
	k.mu.Lock()
	if k.set != nil && now.Sub(k.fetchedAt) > k.timing.keep {
		k.set = nil // the issuer has been unreachable too long to trust these
	}
	set := k.set
	if set != nil && now.Sub(k.fetchedAt) > k.timing.refresh && !k.refreshing && now.Sub(k.lastTry) >= k.timing.kidRefetch {
		k.refreshing = true
		go k.refreshInBackground()
	}
	k.mu.Unlock()

	if set != nil {
		if key := lookup(set, kid); key != nil {
			return key, nil
		}
	}
	// No set, or a kid it lacks (the issuer may have rotated): fetch now,
	// unless a fetch was tried within kidRefetch.
	set, err := k.refetch(ctx, now)
	if set == nil {
		return nil, errNoKeys{err}
	}
	if key := lookup(set, kid); key != nil {
		return key, nil
	}
	return nil, errUnknownKid
}

// refetch fetches the set unless an attempt was made within kidRefetch;
// it returns the set to use (maybe the old one) and the fetch error.
func (k *issuerKeys) refetch(ctx context.Context, now time.Time) (*jose.JSONWebKeySet, error) {
	k.fetchMu.Lock()
	defer k.fetchMu.Unlock()
	k.mu.Lock()
	if now.Sub(k.lastTry) < k.timing.kidRefetch && !k.lastTry.IsZero() {
		set, err := k.set, k.lastErr
		k.mu.Unlock()
		if set == nil && err == nil {
			err = fmt.Errorf("no key set yet")
		}
		return set, err
	}
	k.mu.Unlock()
	return k.doFetch(ctx)
}

func (k *issuerKeys) refreshInBackground() {
	k.fetchMu.Lock()
	defer k.fetchMu.Unlock()
	_, _ = k.doFetch(context.Background())
	k.mu.Lock()
	k.refreshing = false
	k.mu.Unlock()
}

// doFetch fetches the set (fetchMu held) and records the outcome; a
// failure keeps the last good set.
func (k *issuerKeys) doFetch(ctx context.Context) (*jose.JSONWebKeySet, error) {
	ctx, cancel := context.WithTimeout(ctx, k.timing.timeout)
	defer cancel()
	set, err := k.fetch(ctx)
	now := k.now()
	k.mu.Lock()
	defer k.mu.Unlock()
	switch {
	case err != nil && k.set != nil:
		k.log.Warn("token: could not refresh the keys of an issuer; the last good set stays in use", "issuer", k.issuer, "err", err, "set_age", now.Sub(k.fetchedAt).Round(time.Second), "retry_after", k.timing.kidRefetch)
	case err != nil:
		k.log.Warn("token: keys of an issuer unavailable; its tokens are answered 503", "issuer", k.issuer, "err", err, "retry_after", k.timing.kidRefetch)
	case k.lastErr != nil:
		k.log.Info("token: keys of an issuer fetched again", "issuer", k.issuer)
	}
	k.lastTry, k.lastErr = now, err
	if err == nil {
		k.set, k.fetchedAt = set, now
	}
	return k.set, err
}

// seed installs a set read at start (a jwks_file), as a fetch would.
func (k *issuerKeys) seed(set *jose.JSONWebKeySet) {
	now := k.now()
	k.mu.Lock()
	k.set, k.fetchedAt, k.lastTry = set, now, now
	k.mu.Unlock()
}

// prefetch fetches the set once at start. A failure is logged and not
// recorded: the issuer may be reachable by the first token (the network
// may come up after md), which then fetches at once.
func (k *issuerKeys) prefetch(ctx context.Context) {
	k.fetchMu.Lock()
	defer k.fetchMu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, k.timing.timeout)
	defer cancel()
	set, err := k.fetch(ctx)
	if err != nil {
		k.log.Warn("token: keys of an issuer not fetched at start; tried again at its first token", "issuer", k.issuer, "err", err)
		return
	}
	k.seed(set)
}

// lookup returns the public key of the set named kid, or nil.
func lookup(set *jose.JSONWebKeySet, kid string) any {
	for i := range set.Keys {
		if set.Keys[i].KeyID == kid {
			return set.Keys[i].Key
		}
	}
	return nil
}
