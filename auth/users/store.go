package users

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/bcrypt"

	"shoal"
)

// Cache bounds: verified credentials are kept until the file changes; a
// wrong password is remembered a minute, so repeating it (a client
// retrying, or a guesser) costs no bcrypt either.
const (
	DefaultWatchInterval = 2 * time.Second
	cacheEntries         = 4096
	negativeTTL          = time.Minute
)

// dummyHash is compared against for unknown names, so a guess costs the
// same bcrypt whether the name exists or not.
var dummyHash, _ = bcrypt.GenerateFromPassword([]byte("shoal-dummy-password"), bcrypt.DefaultCost)

// Store is the users file as last read, with the credentials cache. It is
// safe for concurrent use.
type Store struct {
	path string
	salt [32]byte // keys the cache: credentials are never kept in clear
	cur  atomic.Pointer[snapshot]
	mu   sync.Mutex // one reload at a time
	sem  chan struct{}
}

// snapshot is one reading of the file; its cache dies with it, which is
// how a changed password or a deleted user takes effect at once.
type snapshot struct {
	raw   []byte
	users map[string]*userEntry

	mu    sync.RWMutex
	cache map[[32]byte]*verdict
}

type userEntry struct {
	hash      []byte
	principal *shoal.Principal
}

type verdict struct {
	p     *shoal.Principal // nil: wrong credentials
	until int64            // unix nanoseconds, for wrong ones
}

// Open reads the users file.
func Open(path string) (*Store, error) {
	s := &Store{path: path, sem: make(chan struct{}, runtime.GOMAXPROCS(0))}
	if _, err := rand.Read(s.salt[:]); err != nil {
		return nil, err
	}
	if _, err := s.reload(0); err != nil {
		return nil, err
	}
	return s, nil
}

// Path is the file the store reads.
func (s *Store) Path() string { return s.path }

// Len is the number of users.
func (s *Store) Len() int { return len(s.cur.Load().users) }

// Reload rereads the file (SIGHUP). On an error the users stay as they
// were.
func (s *Store) Reload() error {
	_, err := s.reload(0)
	return err
}

// settle is how long Watch waits to see a changed file again before using
// it: a file rewritten in place (truncated, then written) must not be
// taken while it is empty or half-written.
const settle = 50 * time.Millisecond

// reload reads the file; with settle > 0 a changed file is read again
// after settle and used only if it reads the same.
func (s *Store) reload(settle time.Duration) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	raw, err := os.ReadFile(s.path)
	if err != nil {
		return false, fmt.Errorf("users file: %w", err)
	}
	if old := s.cur.Load(); old != nil && bytes.Equal(old.raw, raw) {
		return false, nil
	}
	if settle > 0 {
		time.Sleep(settle)
		again, err := os.ReadFile(s.path)
		if err != nil || !bytes.Equal(again, raw) {
			return false, nil // still being written: the next poll sees it
		}
	}
	list, err := Parse(raw)
	if err != nil {
		return false, fmt.Errorf("users file %s: %w", s.path, err)
	}
	snap := &snapshot{raw: raw, users: make(map[string]*userEntry, len(list)), cache: map[[32]byte]*verdict{}}
	for _, u := range list {
		snap.users[u.Name] = &userEntry{
			hash:      []byte(u.Hash),
			principal: &shoal.Principal{Kind: shoal.PrincipalUser, ID: "user:" + u.Name, Name: u.Name, Groups: u.Groups},
		}
	}
	s.cur.Store(snap)
	return true, nil
}

// Watch rereads the file every interval until ctx ends, logging (once per
// distinct error) a file that cannot be read or parsed.
func (s *Store) Watch(ctx context.Context, interval time.Duration, log *slog.Logger) {
	if interval <= 0 {
		interval = DefaultWatchInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	lastErr := ""
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		changed, err := s.reload(settle)
		switch {
		case err != nil && err.Error() != lastErr:
			lastErr = err.Error()
			if log != nil {
				log.Warn("users file not reloaded; the users stay as they were", "err", err)
			}
		case err == nil:
			lastErr = ""
			if changed && log != nil {
				log.Info("users file reloaded", "file", s.path, "users", s.Len())
			}
		}
	}
}

// Verify checks the base64 credentials of a Basic header (the part after
// "Basic "). Credentials seen before cost a SHA-256 and a map lookup; new
// ones a bcrypt, at most GOMAXPROCS at a time. Errors are *shoal.Error
// of KindUnauthorized, naming neither the password nor whether the user
// exists.
func (s *Store) Verify(cred []byte) (*shoal.Principal, error) {
	if len(cred) > maxCredentials {
		return nil, errBadCredentials
	}
	snap := s.cur.Load()
	key := s.key(cred)
	now := time.Now().UnixNano()
	snap.mu.RLock()
	v := snap.cache[key]
	snap.mu.RUnlock()
	if v != nil && (v.p != nil || now < v.until) {
		if v.p == nil {
			return nil, errBadCredentials
		}
		return v.p, nil
	}
	name, password, err := ParseBasic(cred)
	if err != nil {
		return nil, shoal.E("basic", shoal.KindUnauthorized, err)
	}
	p := s.check(snap, name, password)
	v = &verdict{p: p, until: time.Now().Add(negativeTTL).UnixNano()}
	snap.mu.Lock()
	if len(snap.cache) >= cacheEntries {
		for k := range snap.cache { // evict one at random
			delete(snap.cache, k)
			break
		}
	}
	snap.cache[key] = v
	snap.mu.Unlock()
	if p == nil {
		return nil, errBadCredentials
	}
	return p, nil
}

var errBadCredentials = shoal.Errorf("basic", shoal.KindUnauthorized, "wrong user name or password")

func (s *Store) check(snap *snapshot, name, password string) *shoal.Principal {
	s.sem <- struct{}{}
	defer func() { <-s.sem }()
	u := snap.users[name]
	hash := dummyHash
	if u != nil {
		hash = u.hash
	}
	ok := len(password) <= maxPassword && bcrypt.CompareHashAndPassword(hash, []byte(password)) == nil
	if !ok || u == nil {
		return nil
	}
	return u.principal
}

// key is the cache key of credentials: SHA-256 under a per-process salt,
// so the cache holds no password, nor anything a dump could test guesses
// against without the salt.
// cred is at most maxCredentials long (Verify checks), so the buffer
// stays on the stack.
func (s *Store) key(cred []byte) [32]byte {
	var buf [len(s.salt) + maxCredentials]byte
	n := copy(buf[:], s.salt[:])
	n += copy(buf[n:], cred)
	return sha256.Sum256(buf[:n])
}
