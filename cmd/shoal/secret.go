package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"shoal/cmd/shoal/config"
	"shoal/sign"
)

// loadKeys reads the cluster secret file; every command that signs or
// verifies needs one (shoal all makes its own, see ensureSecret).
func loadKeys(c *config.Config) (*sign.Keys, error) {
	if c.SecretFile == "" {
		return nil, fmt.Errorf("secret_file: no cluster secret file given (--secret-file or $SHOAL_SECRET_FILE)")
	}
	keys, err := sign.Load(c.SecretFile)
	if err != nil {
		return nil, err
	}
	keys.SetMaxLifetime(c.SignMaxLifetime)
	return keys, nil
}

// ensureSecret creates path with a fresh random key unless it exists. The
// file is created exclusively with mode 0600, so a concurrent start or an
// existing secret is never overwritten.
func ensureSecret(path string) error {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "# shoal cluster secret: KID SECRET, the first line signs. Keep private.\nk0 %s\n", hex.EncodeToString(b))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
	}
	return err
}

// tightenMode takes group and other access away from a file or directory
// shoal made (older versions made some group-readable).
func tightenMode(path string, mode fs.FileMode) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&^mode != 0 {
		return os.Chmod(path, fi.Mode().Perm()&mode)
	}
	return nil
}
