// Package sign makes and checks the short-lived credentials that let a
// client (or md's own proxy stream) reach a data server without database
// credentials, and that let data servers call md's internal endpoints.
//
// A signature is HMAC-SHA256 over "method\nobject\nexpiry\nextra" with a
// cluster secret named by a key id, so secrets can be rotated: md signs with
// the current key, verifiers accept every key they know.
//
// sign imports only the root package.
package sign

import (
	"bufio"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"shoal"
)

// Query parameter names of a signed data-server URL.
const (
	ParamExpiry = "exp"
	ParamKeyID  = "kid"
	ParamSig    = "sig"
	ParamUpload = "up"
	// ParamPrincipal names who md let make the request (a principal ID,
	// never a credential), for the data server's log; the signature
	// covers it (WithPrincipal), so it can be neither changed nor dropped.
	ParamPrincipal = "who"
)

// Header names of a signed internal call.
const (
	HeaderKeyID  = "X-Shoal-Kid"
	HeaderExpiry = "X-Shoal-Exp"
	HeaderSig    = "X-Shoal-Sig"
	HeaderNonce  = "X-Shoal-Nonce"       // random, refused a second time (wire.ReplayGuard)
	HeaderDigest = "X-Shoal-Body-Sha256" // of the body, signed: checked before the body is read
)

// Keys holds the cluster secrets by key id.
type Keys struct {
	current     string
	secrets     map[string][]byte
	maxLifetime time.Duration
}

// DefaultMaxLifetime is the longest a signature may be valid for: a
// signature whose expiry lies further ahead is refused, so that no leaked
// URL or call outlives it. md signs for md.url_ttl (a minute by default).
const DefaultMaxLifetime = time.Hour

// MinKeyLen is the shortest secret NewKeys accepts, signing or verifying.
const MinKeyLen = 16

// NewKeys returns keys that sign with current; secrets must contain it,
// and every secret must be at least MinKeyLen bytes.
func NewKeys(current string, secrets map[string][]byte) (*Keys, error) {
	if _, ok := secrets[current]; !ok {
		return nil, shoal.Errorf("sign.NewKeys", shoal.KindInvalid, "key %q missing", current)
	}
	for kid, s := range secrets {
		if len(s) < MinKeyLen {
			return nil, shoal.Errorf("sign.NewKeys", shoal.KindInvalid, "key %q is shorter than %d bytes", kid, MinKeyLen)
		}
	}
	return &Keys{current: current, secrets: secrets, maxLifetime: DefaultMaxLifetime}, nil
}

// SetMaxLifetime changes the longest validity Verify accepts (d > 0).
func (k *Keys) SetMaxLifetime(d time.Duration) {
	if d > 0 {
		k.maxLifetime = d
	}
}

// MaxLifetime is the longest validity Verify accepts.
func (k *Keys) MaxLifetime() time.Duration { return k.maxLifetime }

// Random makes a single fresh key, for a single-process deployment (shoal all).
func Random() *Keys {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	k, _ := NewKeys("k0", map[string][]byte{"k0": b})
	return k
}

// Load reads a secret file (see parseSecrets).
func Load(path string) (*Keys, error) {
	const op = "sign.Load"
	f, err := os.Open(path)
	if err != nil {
		return nil, shoal.E(op, path, shoal.KindInvalid, err)
	}
	defer f.Close()
	current, secrets, err := parseSecrets(f)
	if err != nil {
		return nil, shoal.Errorf(op, shoal.KindInvalid, "%s: %v", path, err)
	}
	return NewKeys(current, secrets)
}

// parseSecrets reads a secret file: one key per line, "KID SECRET" or
// just "SECRET" (key id "k0"), separated by spaces or tabs; the first key
// signs; '#' starts a comment. A line of three words or more, or a key id
// given twice, is an error: a tab once made "k1<TAB>hex" one secret of
// key k0, and a repeated id silently replaced the first.
func parseSecrets(r io.Reader) (current string, secrets map[string][]byte, err error) {
	secrets = map[string][]byte{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		kid, secret := "k0", ""
		switch f := strings.Fields(line); len(f) {
		case 1:
			secret = f[0]
		case 2:
			kid, secret = f[0], f[1]
		default:
			return "", nil, fmt.Errorf("line %d: want KID SECRET or SECRET, found %d words", n, len(f))
		}
		if _, dup := secrets[kid]; dup {
			return "", nil, fmt.Errorf("line %d: key id %q given twice", n, kid)
		}
		if current == "" {
			current = kid
		}
		secrets[kid] = []byte(secret)
	}
	if err := sc.Err(); err != nil {
		return "", nil, err
	}
	if current == "" {
		return "", nil, fmt.Errorf("no key")
	}
	return current, secrets, nil
}

func mac(secret []byte, method, object string, exp int64, extra string) []byte {
	h := hmac.New(sha256.New, secret)
	fmt.Fprintf(h, "%s\n%s\n%d\n%s", method, object, exp, extra)
	return h.Sum(nil)
}

// Sign returns the key id and hex signature for method on object until exp.
func (k *Keys) Sign(method, object string, exp int64, extra string) (kid, sig string) {
	return k.current, hex.EncodeToString(mac(k.secrets[k.current], method, object, exp, extra))
}

// Verify checks a signature: KindPermission (403, as for any presigned URL) if the key is unknown or the
// signature wrong, or if it expired before now.
func (k *Keys) Verify(method, object string, exp int64, extra, kid, sig string, now time.Time) error {
	const op = "sign.Verify"
	secret, ok := k.secrets[kid]
	if !ok {
		return shoal.Errorf(op, shoal.KindPermission, "unknown key id")
	}
	got, err := hex.DecodeString(sig)
	if err != nil || !hmac.Equal(got, mac(secret, method, object, exp, extra)) {
		return shoal.Errorf(op, shoal.KindPermission, "bad signature")
	}
	if now.Unix() > exp {
		return shoal.Errorf(op, shoal.KindPermission, "signature expired")
	}
	if exp-now.Unix() > int64(k.maxLifetime/time.Second) {
		return shoal.Errorf(op, shoal.KindPermission, "signature valid for longer than the %v allowed", k.maxLifetime)
	}
	return nil
}

// URL returns base + "/obj/" + object with a signature for method valid
// until exp; upload (may be empty) is the upload id a PUT commits to.
func (k *Keys) URL(base, method, object, upload string, exp time.Time) string {
	return k.URLAs(base, method, object, upload, "", exp)
}

// URLAs is URL made for principal (a principal ID, or "" for none): the
// URL names it (ParamPrincipal) and its signature covers it.
func (k *Keys) URLAs(base, method, object, upload, principal string, exp time.Time) string {
	e := exp.Unix()
	kid, sig := k.Sign(method, object, e, WithPrincipal(upload, principal))
	q := url.Values{}
	q.Set(ParamExpiry, strconv.FormatInt(e, 10))
	q.Set(ParamKeyID, kid)
	q.Set(ParamSig, sig)
	if upload != "" {
		q.Set(ParamUpload, upload)
	}
	if principal != "" {
		q.Set(ParamPrincipal, principal)
	}
	return strings.TrimRight(base, "/") + ObjectPath(object) + "?" + q.Encode()
}

// WithPrincipal is the "extra" a URL's signature covers once it names a
// principal. A principal ID holds no control character (see
// shoal.Principal), and no extra holds a newline, so the two cannot be
// confused.
func WithPrincipal(extra, principal string) string {
	if principal == "" {
		return extra
	}
	return extra + "\nwho=" + principal
}

// VerifyQuery checks the signature of an object URL: the expiry, key id
// and signature read with get (the Param* query parameters) over method,
// object, extra (what else the URL's signature covers: the upload id of
// a data-server URL, more for a gw's) and the principal it names, if any. A HEAD may use a URL signed for
// GET: it is a GET without body. Missing or bad: KindPermission.
func (k *Keys) VerifyQuery(method, object, extra string, get func(string) string, now time.Time) error {
	const op = "sign.VerifyQuery"
	expS, kid, sig := get(ParamExpiry), get(ParamKeyID), get(ParamSig)
	if expS == "" || kid == "" || sig == "" {
		return shoal.Errorf(op, shoal.KindPermission, "missing signature (exp, kid, sig)")
	}
	exp, err := strconv.ParseInt(expS, 10, 64)
	if err != nil {
		return shoal.Errorf(op, shoal.KindPermission, "bad expiry")
	}
	extra = WithPrincipal(extra, get(ParamPrincipal))
	err = k.Verify(method, object, exp, extra, kid, sig, now)
	if err != nil && method == "HEAD" && k.Verify("GET", object, exp, extra, kid, sig, now) == nil {
		err = nil
	}
	return err
}

// ObjectPath is the URL path of an object on a data server.
func ObjectPath(object string) string { return "/obj/" + object }

// BodyDigest is the "extra" of an internal call: the hex SHA-256 of its body.
func BodyDigest(body []byte) string {
	s := sha256.Sum256(body)
	return hex.EncodeToString(s[:])
}
