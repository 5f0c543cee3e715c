package main

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"shoal/auth/users"
)

func runWithStdin(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	root := newRootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetIn(strings.NewReader(stdin))
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

func TestAdminUser(t *testing.T) {
	file := filepath.Join(t.TempDir(), "users")
	out, err := runWithStdin(t, "s3cret\n", "admin", "user", "add", "alice", "--users-file", file, "--groups", "cms,staff", "--cost", "4")
	if err != nil || !strings.Contains(out, "added user alice") {
		t.Fatalf("add: %v\n%s", err, out)
	}
	if _, err := runWithStdin(t, "other", "admin", "user", "add", "bob", "--users-file", file, "--cost", "4"); err != nil {
		t.Fatal(err)
	}
	out, err = runWithStdin(t, "", "admin", "user", "list", "--users-file", file)
	if err != nil || !strings.Contains(out, "alice") || !strings.Contains(out, "cms,staff") || !strings.Contains(out, "bob") || strings.Contains(out, "$2") {
		t.Fatalf("list: %v\n%s", err, out)
	}
	// The file works for md: alice's Basic credentials verify.
	s, err := users.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Verify([]byte(base64.StdEncoding.EncodeToString([]byte("alice:s3cret"))))
	if err != nil || !p.InGroup("staff") {
		t.Fatalf("verify: %v %v", p, err)
	}
	if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode())
	}
	out, err = runWithStdin(t, "", "admin", "user", "del", "alice", "--users-file", file)
	if err != nil || !strings.Contains(out, "deleted user alice") {
		t.Fatalf("del: %v\n%s", err, out)
	}
	if _, err := runWithStdin(t, "", "admin", "user", "del", "alice", "--users-file", file); err == nil {
		t.Fatal("deleting a missing user succeeded")
	}
	if _, err := runWithStdin(t, "", "admin", "user", "add", "carol", "--users-file", file); err == nil {
		t.Fatal("empty password accepted")
	}
	if _, err := runWithStdin(t, "pw", "admin", "user", "add", "bad:name", "--users-file", file); err == nil {
		t.Fatal("bad name accepted")
	}
	if _, err := runWithStdin(t, "pw", "admin", "user", "list"); err == nil || !strings.Contains(err.Error(), "--users-file") {
		t.Fatalf("no file: %v", err)
	}
}

// TestAdminUserConfigFile: without --users-file the command edits
// auth.users_file, the file md reads.
func TestAdminUserConfigFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "users")
	t.Setenv("SHOAL_AUTH_USERS_FILE", file)
	if out, err := runWithStdin(t, "pw\n", "admin", "user", "add", "dave", "--cost", "4"); err != nil || !strings.Contains(out, file) {
		t.Fatalf("add: %v\n%s", err, out)
	}
	if out, err := runWithStdin(t, "", "admin", "user", "list"); err != nil || !strings.Contains(out, "dave") {
		t.Fatalf("list: %v\n%s", err, out)
	}
	t.Setenv("SHOAL_AUTH_USERS_FILE", "")
	if _, err := runWithStdin(t, "", "admin", "user", "list"); err == nil || !strings.Contains(err.Error(), "auth.users_file") {
		t.Fatalf("no file: %v", err)
	}
}
