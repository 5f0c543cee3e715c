package diskserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"shoal"
	"shoal/sign"
)

// TestOneServerPerDirectory: a second data server on a data directory in
// use is refused before it touches anything there (it would repair
// what the first is writing); once the first closes, it starts.
func TestOneServerPerDirectory(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	opts := Options{Dirs: []string{dir}, Keys: sign.Random(), ReserveBytes: -1}
	first, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	temp := filepath.Join(dir, tmpDir, "upload-in-flight")
	if err := os.WriteFile(temp, []byte("half an upload"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = New(Options{Dirs: []string{other, dir}, Keys: opts.Keys, ReserveBytes: -1})
	if shoal.KindOf(err) != shoal.KindUnavailable || !strings.Contains(err.Error(), dir) {
		t.Fatalf("second server on %s: %v, want KindUnavailable naming it", dir, err)
	}
	if _, err := os.Stat(temp); err != nil {
		t.Errorf("the refused server touched the directory: %v", err)
	}
	// The refused server released what it had taken: other is free.
	third, err := New(Options{Dirs: []string{other}, Keys: opts.Keys, ReserveBytes: -1})
	if err != nil {
		t.Fatalf("a free directory after a refusal: %v", err)
	}
	third.Close()
	first.Close()
	again, err := New(opts)
	if err != nil {
		t.Fatalf("after Close: %v", err)
	}
	again.Close()
}
