package md

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"shoal/auth"
	"shoal/auth/token"
	"shoal/internal/testissuer"
)

// TestAuthKeysUnavailable: a token whose issuer's keys cannot be had (its
// jwks_file gone after start) gets 503 saying the issuer's keys are
// unavailable, with neither md's file path nor the read error in the
// body; md's log has both, and the issuer.
func TestAuthKeysUnavailable(t *testing.T) {
	is := testissuer.New(t)
	file := filepath.Join(t.TempDir(), "issuer.jwks")
	if err := os.WriteFile(file, is.JWKS(), 0o600); err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	// Keys kept for a nanosecond and refetched at will: the next token
	// rereads the file.
	v, err := token.New(token.Config{Issuers: []token.IssuerConfig{{URL: is.URL, JWKSFile: file}}, Audiences: []string{testAudience},
		KeyKeep: time.Nanosecond, KidRefetch: time.Nanosecond, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, DataRedirect, func(o *Options) { o.Auth, o.AccessLog = auth.New(auth.Config{Tokens: v}), log })
	os.Remove(file)
	r := e.do("HEAD", "/", map[string]string{"Authorization": "Bearer " + is.Mint(t, is.WLCG("a", testAudience, "storage.read:/"))}, nil)
	if r.status != 503 {
		t.Fatalf("HEAD: %d %s", r.status, r.body)
	}
	r = e.do("GET", "/x", map[string]string{"Authorization": "Bearer " + is.Mint(t, is.WLCG("b", testAudience, "storage.read:/"))}, nil)
	if r.status != 503 || !strings.Contains(r.body, "keys of issuer "+is.URL+" unavailable") ||
		strings.Contains(r.body, file) || strings.Contains(r.body, "no such file") {
		t.Errorf("GET: %d %q", r.status, r.body)
	}
	if !strings.Contains(logs.String(), "issuer="+is.URL) || !strings.Contains(logs.String(), file) {
		t.Errorf("md's log does not say why:\n%s", logs)
	}
}
