package token

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"shoal"
	"shoal/internal/testissuer"
	"shoal/internal/testlog"
)

type lockedBuffer = testlog.Buffer

// TestJWKSFileAtStart: a jwks_file that is missing, not JSON or without
// a usable key is New's error, naming the issuer's index and the file;
// a good one is read at once.
func TestJWKSFileAtStart(t *testing.T) {
	is := testissuer.New(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jwks")
	os.WriteFile(good, is.JWKS(), 0o600)
	notJSON := filepath.Join(dir, "bad.jwks")
	os.WriteFile(notJSON, []byte("-----BEGIN PUBLIC KEY-----"), 0o600)
	empty := filepath.Join(dir, "empty.jwks")
	os.WriteFile(empty, []byte(`{"keys":[]}`), 0o600)
	for _, tc := range []struct{ file, want string }{
		{filepath.Join(dir, "missing.jwks"), "no such file"},
		{notJSON, "invalid character"},
		{empty, "no usable"},
	} {
		_, err := New(Config{Issuers: []IssuerConfig{{URL: "https://ok.example.org", JWKSFile: good}, {URL: is.URL, JWKSFile: tc.file}}, Audiences: []string{testAud}})
		if !shoal.IsKind(err, shoal.KindInvalid) || !strings.Contains(err.Error(), "issuers[1].jwks_file: ") ||
			!strings.Contains(err.Error(), tc.file) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v", tc.file, err)
		}
	}
}

// TestKeyFailuresLogged: an issuer whose keys cannot be had is answered
// 503 with no detail (no path, no URL of its documents, no dial error);
// the reason goes to the log, once per attempt, naming the issuer and
// never the token. A failure at Prefetch is logged and does not hold
// back the first token once the issuer is up.
func TestKeyFailuresLogged(t *testing.T) {
	is := testissuer.New(t)
	logs := &lockedBuffer{}
	v := newVerifier(t, Config{Logger: slog.New(slog.NewTextHandler(logs, nil))}, is)
	is.SetDown(true)
	v.Prefetch(context.Background())
	if !strings.Contains(logs.String(), "not fetched at start") || !strings.Contains(logs.String(), "issuer="+is.URL) || !strings.Contains(logs.String(), "HTTP 503") {
		t.Fatalf("no start warning:\n%s", logs)
	}
	is.SetDown(false)
	tok := is.Mint(t, is.WLCG("a", testAud, "storage.read:/"))
	if _, err := verify(v, tok); err != nil {
		t.Fatalf("first token after a failed prefetch: %v", err)
	}

	down := testissuer.New(t)
	logs = &lockedBuffer{}
	v = newVerifier(t, Config{Logger: slog.New(slog.NewTextHandler(logs, nil))}, down)
	down.SetDown(true)
	tok = down.Mint(t, down.WLCG("a", testAud, "storage.read:/"))
	for range 3 {
		_, err := verify(v, tok)
		if !shoal.IsKind(err, shoal.KindUnavailable) {
			t.Fatalf("issuer down: %v", err)
		}
		if r := err.(*shoal.Error).Reason(); r != "unavailable: keys of issuer "+down.URL+" unavailable (md's log says why); try again later" {
			t.Errorf("client's reason: %q", r)
		}
	}
	if n := strings.Count(logs.String(), "keys of an issuer unavailable"); n != 1 || !strings.Contains(logs.String(), "issuer="+down.URL) ||
		!strings.Contains(logs.String(), "HTTP 503") {
		t.Errorf("%d log lines for three tokens within a minute, want 1:\n%s", n, logs)
	}
	sig := tok[strings.LastIndexByte(tok, '.')+1:]
	if strings.Contains(logs.String(), sig) {
		t.Errorf("the token reached the log:\n%s", logs)
	}

	// A jwks_file gone after start: dropped with the set it gave, 503
	// without the file's path; the log has it.
	file := filepath.Join(t.TempDir(), "keys.jwks")
	os.WriteFile(file, is.JWKS(), 0o600)
	logs = &lockedBuffer{}
	v, err := New(Config{Issuers: []IssuerConfig{{URL: is.URL, JWKSFile: file}}, Audiences: []string{testAud},
		KeyKeep: time.Nanosecond, KidRefetch: time.Nanosecond, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(file)
	_, err = verify(v, is.Mint(t, is.WLCG("b", testAud, "storage.read:/")))
	if !shoal.IsKind(err, shoal.KindUnavailable) || strings.Contains(err.Error(), file) {
		t.Errorf("jwks_file gone: %v", err)
	}
	if !strings.Contains(logs.String(), file) {
		t.Errorf("the log does not say which file:\n%s", logs)
	}
}
