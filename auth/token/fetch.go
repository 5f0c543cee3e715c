package token

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// maxDocument bounds a discovery document or a key set: real ones are a
// few KiB, and an issuer is not trusted to be small.
const maxDocument = 1 << 20

// fetcher gets discovery documents and key sets. It is net/http, not
// fasthttp: it runs once an hour per issuer, never per request.
type fetcher struct {
	client    *http.Client
	allowHTTP bool // http:// for loopback issuers (tests only)
}

func newFetcher(timeout time.Duration, roots *x509.CertPool, allowHTTP bool) *fetcher {
	f := &fetcher{allowHTTP: allowHTTP}
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		TLSClientConfig:       &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: roots},
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
		MaxIdleConnsPerHost:   1,
		IdleConnTimeout:       time.Minute,
	}
	f.client = &http.Client{
		Transport: tr,
		Timeout:   timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 3 {
				return errors.New("too many redirects")
			}
			return f.checkURL(req.URL)
		},
	}
	return f
}

// checkURL allows https, and http only to a loopback host when allowed.
func (f *fetcher) checkURL(u *url.URL) error {
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if f.allowHTTP && isLoopback(u.Hostname()) {
			return nil
		}
	}
	return fmt.Errorf("%s: https required", u.Redacted())
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// getJSON fetches raw and decodes at most maxDocument bytes of JSON.
func (f *fetcher) getJSON(ctx context.Context, raw string, v any) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("bad URL: %w", err)
	}
	if err := f.checkURL(u); err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := f.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: HTTP %d", u.Redacted(), resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument+1))
	if err != nil {
		return fmt.Errorf("%s: %w", u.Redacted(), err)
	}
	if len(body) > maxDocument {
		return fmt.Errorf("%s: document over %d bytes", u.Redacted(), maxDocument)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%s: %w", u.Redacted(), err)
	}
	return nil
}

// discoveryURL is the OpenID Connect discovery document of an issuer.
func discoveryURL(issuer string) string {
	return strings.TrimSuffix(issuer, "/") + "/.well-known/openid-configuration"
}

// fetchKeys gets an issuer's key set by OIDC discovery. The document must
// name the issuer it was fetched for (OpenID Connect Discovery 4.3).
func (f *fetcher) fetchKeys(ctx context.Context, issuer string) (*jose.JSONWebKeySet, error) {
	var doc struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	if err := f.getJSON(ctx, discoveryURL(issuer), &doc); err != nil {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	if strings.TrimSuffix(doc.Issuer, "/") != strings.TrimSuffix(issuer, "/") {
		return nil, fmt.Errorf("discovery document names issuer %.100q", doc.Issuer)
	}
	if doc.JWKSURI == "" {
		return nil, fmt.Errorf("discovery document has no jwks_uri")
	}
	var set jose.JSONWebKeySet
	if err := f.getJSON(ctx, doc.JWKSURI, &set); err != nil {
		return nil, fmt.Errorf("jwks: %w", err)
	}
	return usableKeys(&set)
}

// readKeyFile reads a key set from a JWKS file, for sites whose md cannot
// reach the issuer.
func readKeyFile(path string) (*jose.JSONWebKeySet, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) > maxDocument {
		return nil, fmt.Errorf("%s: over %d bytes", path, maxDocument)
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(b, &set); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out, err := usableKeys(&set)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// usableKeys keeps the public signing keys with a kid that RS256 or ES256
// can use; a set left with none is an error (the issuer's last good set
// stays in use).
func usableKeys(set *jose.JSONWebKeySet) (*jose.JSONWebKeySet, error) {
	out := &jose.JSONWebKeySet{}
	for _, k := range set.Keys {
		if k.KeyID == "" || !k.IsPublic() || !k.Valid() || (k.Use != "" && k.Use != "sig") {
			continue
		}
		if k.Algorithm != "" && k.Algorithm != string(jose.RS256) && k.Algorithm != string(jose.ES256) {
			continue
		}
		out.Keys = append(out.Keys, k)
	}
	if len(out.Keys) == 0 {
		return nil, fmt.Errorf("key set has no usable RS256/ES256 public key with a kid")
	}
	return out, nil
}
