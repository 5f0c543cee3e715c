package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestJWKSFileStartError: shoal all refuses to start with a jwks_file it
// cannot read or parse, naming the key; before, it started and answered
// every token of that issuer 503.
func TestJWKSFileStartError(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jwks")
	os.WriteFile(bad, []byte("not json"), 0o600)
	for _, file := range []string{filepath.Join(dir, "missing.jwks"), bad} {
		cfg := writeConfig(t, "auth:\n  issuers:\n    - {url: https://a.example.org, jwks_file: "+file+"}\n")
		// Without the check md would serve: the deadline stops it.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		root := newRootCommand()
		root.SetArgs([]string{"all", "--data", t.TempDir(), "--listen", "127.0.0.1:0", "--config", cfg})
		root.SetOut(os.Stderr)
		err := root.ExecuteContext(ctx)
		cancel()
		if err == nil || !strings.Contains(err.Error(), "auth.issuers[0].jwks_file: ") || !strings.Contains(err.Error(), file) {
			t.Errorf("%s: err = %v", file, err)
		}
	}
}
