// Package testissuer is a real OpenID Connect token issuer for tests: an
// HTTPS server on 127.0.0.1 (its certificate from a private CA made for
// the test) serving the discovery document and the JWKS, and minting
// RS256 and ES256 tokens in the WLCG and SciTokens profiles. It can rotate
// keys, go down, and craft the bad tokens a compliance suite needs
// ("none", HS256). md and e2e tests use it as the grid's token issuer.
package testissuer

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"shoal/tlsconf"
)

// Issuer is a running test issuer.
type Issuer struct {
	// URL is the issuer (iss claim), https://127.0.0.1:PORT.
	URL string
	// CA signed the server's certificate: Pool() for clients.
	CA *tlsconf.CA

	srv *httptest.Server

	mu        sync.Mutex
	keys      map[string]*key // every key made, by kid
	published []string        // kids in the JWKS, in order
	signing   string          // default kid for Mint
	down      bool

	jwksFetches atomic.Int64
}

type key struct {
	alg    jose.SignatureAlgorithm
	signer crypto.Signer
}

// New starts an issuer with one RS256 key (the default signing key) and
// one ES256 key, both published. It stops when the test ends.
func New(t testing.TB) *Issuer {
	t.Helper()
	ca, err := tlsconf.NewCA("testissuer CA")
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := ca.Issue([]string{"127.0.0.1", "localhost"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	is := &Issuer{CA: ca, keys: map[string]*key{}}
	is.srv = httptest.NewUnstartedServer(http.HandlerFunc(is.serve))
	is.srv.Config.ErrorLog = log.New(io.Discard, "", 0) // handshakes refused on purpose
	is.srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	is.srv.StartTLS()
	t.Cleanup(is.srv.Close)
	is.URL = is.srv.URL
	is.signing = is.AddKey(t, jose.RS256)
	is.AddKey(t, jose.ES256)
	return is
}

// Pool holds the CA the issuer's https certificate chains to.
func (is *Issuer) Pool() *x509.CertPool { return is.CA.Pool() }

// AddKey makes and publishes a new key (RS256: RSA 2048; ES256: P-256)
// and returns its kid. It does not change the default signing key.
func (is *Issuer) AddKey(t testing.TB, alg jose.SignatureAlgorithm) string {
	t.Helper()
	var signer crypto.Signer
	var err error
	switch alg {
	case jose.RS256:
		signer, err = rsa.GenerateKey(rand.Reader, 2048)
	case jose.ES256:
		signer, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	default:
		t.Fatalf("testissuer: no %s keys", alg)
	}
	if err != nil {
		t.Fatal(err)
	}
	is.mu.Lock()
	defer is.mu.Unlock()
	kid := fmt.Sprintf("%s-%d", alg, len(is.keys)+1)
	is.keys[kid] = &key{alg: alg, signer: signer}
	is.published = append(is.published, kid)
	return kid
}

// Unpublish removes a key from the JWKS (it can still sign: a token from
// a retired or stolen key).
func (is *Issuer) Unpublish(kid string) {
	is.mu.Lock()
	defer is.mu.Unlock()
	for i, k := range is.published {
		if k == kid {
			is.published = append(is.published[:i], is.published[i+1:]...)
			return
		}
	}
}

// Rotate makes a new key of alg, publishes it, makes it the default
// signing key and unpublishes the old default; it returns the new kid.
func (is *Issuer) Rotate(t testing.TB, alg jose.SignatureAlgorithm) string {
	kid := is.AddKey(t, alg)
	is.mu.Lock()
	old := is.signing
	is.signing = kid
	is.mu.Unlock()
	is.Unpublish(old)
	return kid
}

// SigningKid is the kid Mint signs with.
func (is *Issuer) SigningKid() string {
	is.mu.Lock()
	defer is.mu.Unlock()
	return is.signing
}

// KidFor returns the first published kid of alg.
func (is *Issuer) KidFor(alg jose.SignatureAlgorithm) string {
	is.mu.Lock()
	defer is.mu.Unlock()
	for _, kid := range is.published {
		if is.keys[kid].alg == alg {
			return kid
		}
	}
	return ""
}

// SetDown makes every request to the issuer fail with 503 (true) or
// succeed again (false).
func (is *Issuer) SetDown(down bool) {
	is.mu.Lock()
	is.down = down
	is.mu.Unlock()
}

// JWKSFetches counts the JWKS documents served.
func (is *Issuer) JWKSFetches() int64 { return is.jwksFetches.Load() }

// JWKS is the published key set, as served (for jwks_file configs).
func (is *Issuer) JWKS() []byte {
	is.mu.Lock()
	defer is.mu.Unlock()
	var set jose.JSONWebKeySet
	for _, kid := range is.published {
		k := is.keys[kid]
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: k.signer.Public(), KeyID: kid, Algorithm: string(k.alg), Use: "sig"})
	}
	b, err := json.Marshal(set)
	if err != nil {
		panic(err)
	}
	return b
}

func (is *Issuer) serve(w http.ResponseWriter, r *http.Request) {
	is.mu.Lock()
	down := is.down
	is.mu.Unlock()
	if down {
		http.Error(w, "issuer down for the test", http.StatusServiceUnavailable)
		return
	}
	switch r.URL.Path {
	case "/.well-known/openid-configuration":
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer":                                is.URL,
			"jwks_uri":                              is.URL + "/jwks",
			"id_token_signing_alg_values_supported": []string{"RS256", "ES256"},
		})
	case "/jwks":
		is.jwksFetches.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(is.JWKS())
	default:
		http.NotFound(w, r)
	}
}

// Claims are a token's claims; Mint fills iss when absent.
type Claims map[string]any

// WLCG returns the claims of a WLCG profile 1.0 token for sub, valid from
// now for ten minutes, with the given audience and scope (both may be
// "", then left out).
func (is *Issuer) WLCG(sub, aud, scope string) Claims {
	now := time.Now()
	c := Claims{
		"iss":      is.URL,
		"sub":      sub,
		"wlcg.ver": "1.0",
		"iat":      now.Unix(),
		"nbf":      now.Unix(),
		"exp":      now.Add(10 * time.Minute).Unix(),
		"jti":      fmt.Sprintf("jti-%d", now.UnixNano()),
	}
	if aud != "" {
		c["aud"] = aud
	}
	if scope != "" {
		c["scope"] = scope
	}
	return c
}

// SciToken returns the claims of a SciTokens 2.0 token, like WLCG.
func (is *Issuer) SciToken(sub, aud, scope string) Claims {
	c := is.WLCG(sub, aud, scope)
	delete(c, "wlcg.ver")
	c["ver"] = "scitokens:2.0"
	return c
}

// Mint signs claims with the default signing key.
func (is *Issuer) Mint(t testing.TB, c Claims) string {
	t.Helper()
	return is.MintWith(t, is.SigningKid(), c)
}

// MintWith signs claims with the key kid (published or not).
func (is *Issuer) MintWith(t testing.TB, kid string, c Claims) string {
	t.Helper()
	is.mu.Lock()
	k := is.keys[kid]
	is.mu.Unlock()
	if k == nil {
		t.Fatalf("testissuer: no key %q", kid)
	}
	return is.sign(t, jose.SigningKey{Algorithm: k.alg, Key: k.signer}, kid, c)
}

// MintNoKid signs with the default key but leaves kid out of the header.
func (is *Issuer) MintNoKid(t testing.TB, c Claims) string {
	t.Helper()
	is.mu.Lock()
	k := is.keys[is.signing]
	is.mu.Unlock()
	return is.sign(t, jose.SigningKey{Algorithm: k.alg, Key: k.signer}, "", c)
}

// MintHS256 signs with HMAC-SHA256 under secret (which a verifier that
// confused algorithms might take from a public key).
func (is *Issuer) MintHS256(t testing.TB, secret []byte, kid string, c Claims) string {
	t.Helper()
	return is.sign(t, jose.SigningKey{Algorithm: jose.HS256, Key: secret}, kid, c)
}

// MintNone is an unsigned token (alg "none") naming kid.
func (is *Issuer) MintNone(t testing.TB, kid string, c Claims) string {
	t.Helper()
	is.fill(c)
	hdr, _ := json.Marshal(map[string]string{"alg": "none", "typ": "JWT", "kid": kid})
	body, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding.EncodeToString
	return enc(hdr) + "." + enc(body) + "."
}

func (is *Issuer) fill(c Claims) {
	if _, ok := c["iss"]; !ok {
		c["iss"] = is.URL
	}
}

func (is *Issuer) sign(t testing.TB, sk jose.SigningKey, kid string, c Claims) string {
	t.Helper()
	is.fill(c)
	opts := (&jose.SignerOptions{}).WithType("JWT")
	if kid != "" {
		opts = opts.WithHeader("kid", kid)
	}
	signer, err := jose.NewSigner(sk, opts)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(signer).Claims(map[string]any(c)).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
