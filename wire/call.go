package wire

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"strconv"
	"sync"
	"time"

	"shoal"
	"shoal/sign"
)

// An internal call is authenticated by headers alone, so that a receiver
// checks the signature before it reads a byte of the body: the signature
// covers method, path, expiry, the SHA-256 of the body (sent in a header
// and compared once the body is read) and a random nonce, which a
// ReplayGuard remembers until the call expires.

// CallAuth is the signature headers of an internal call.
type CallAuth struct {
	Kid, Exp, Sig, Nonce, Digest string
}

// SignCall signs a call of method on path with body, valid for ttl.
func SignCall(keys *sign.Keys, method, path string, body []byte, ttl time.Duration) CallAuth {
	var n [16]byte
	rand.Read(n[:])
	a := CallAuth{Nonce: hex.EncodeToString(n[:]), Digest: sign.BodyDigest(body)}
	e := time.Now().Add(ttl).Unix()
	a.Exp = strconv.FormatInt(e, 10)
	a.Kid, a.Sig = keys.Sign(method, path, e, a.Digest+"|"+a.Nonce)
	return a
}

// Set writes the headers with set (a request header's Set).
func (a CallAuth) Set(set func(k, v string)) {
	set(sign.HeaderKeyID, a.Kid)
	set(sign.HeaderExpiry, a.Exp)
	set(sign.HeaderSig, a.Sig)
	set(sign.HeaderNonce, a.Nonce)
	set(sign.HeaderDigest, a.Digest)
}

// ReadCallAuth reads the headers with get.
func ReadCallAuth(get func(string) string) CallAuth {
	return CallAuth{Kid: get(sign.HeaderKeyID), Exp: get(sign.HeaderExpiry), Sig: get(sign.HeaderSig),
		Nonce: get(sign.HeaderNonce), Digest: get(sign.HeaderDigest)}
}

// Verify checks the headers of a call of method on path, before its body
// is read: KindPermission when any is missing, malformed, expired, signed
// with an unknown key or wrongly, or a replay (guard may be nil).
func (a CallAuth) Verify(keys *sign.Keys, method, path string, guard *ReplayGuard, now time.Time) error {
	const op = "wire.Verify"
	if len(a.Nonce) != 32 || len(a.Digest) != 64 {
		return shoal.Errorf(op, shoal.KindPermission, "missing or malformed %s / %s header", sign.HeaderNonce, sign.HeaderDigest)
	}
	e, err := strconv.ParseInt(a.Exp, 10, 64)
	if err != nil {
		return shoal.Errorf(op, shoal.KindPermission, "bad %s header", sign.HeaderExpiry)
	}
	if err := keys.Verify(method, path, e, a.Digest+"|"+a.Nonce, a.Kid, a.Sig, now); err != nil {
		return err
	}
	return guard.fresh(a.Nonce, e, now)
}

// CheckBody compares the body read with the digest the signature covers.
func (a CallAuth) CheckBody(body []byte) error {
	if subtle.ConstantTimeCompare([]byte(sign.BodyDigest(body)), []byte(a.Digest)) != 1 {
		return shoal.Errorf("wire.Verify", shoal.KindPermission, "body does not match its signed digest")
	}
	return nil
}

// ReplayGuard remembers the nonces of the calls it let through until they
// expire, and refuses them a second time. It is per process: a call
// replayed to another md replica within its expiry (a minute at most, see
// sign.Keys' maximum lifetime) is not caught.
type ReplayGuard struct {
	mu     sync.Mutex
	seen   map[[16]byte]int64 // nonce → expiry (unix seconds)
	pruned int64
}

// maxNonces bounds the memory of a ReplayGuard (about 40 MB at most);
// only correctly signed calls can fill it.
const maxNonces = 1 << 20

// NewReplayGuard returns an empty guard.
func NewReplayGuard() *ReplayGuard { return &ReplayGuard{seen: map[[16]byte]int64{}} }

func (g *ReplayGuard) fresh(nonce string, exp int64, now time.Time) error {
	if g == nil {
		return nil
	}
	var k [16]byte
	if _, err := hex.Decode(k[:], []byte(nonce)); err != nil {
		return shoal.Errorf("wire.Verify", shoal.KindPermission, "malformed nonce")
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	t := now.Unix()
	if len(g.seen) >= maxNonces/2 && t != g.pruned {
		for n, e := range g.seen {
			if e < t {
				delete(g.seen, n)
			}
		}
		g.pruned = t
	}
	if _, dup := g.seen[k]; dup {
		return shoal.Errorf("wire.Verify", shoal.KindPermission, "replayed call")
	}
	if len(g.seen) >= maxNonces {
		return shoal.Errorf("wire.Verify", shoal.KindUnavailable, "too many calls in flight to remember")
	}
	g.seen[k] = exp
	return nil
}

// callTTL is how long a signed internal call is valid: long enough for a
// clock skew between hosts, short enough to keep few nonces.
const callTTL = time.Minute
