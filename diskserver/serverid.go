package diskserver

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"shoal"
)

// serverIDFile holds the persisted server id in the first data directory.
const serverIDFile = "server-id"

// ServerID is dir's server id (dir/server-id), made with a random id and
// persisted first if it has none.
func ServerID(dir string) (string, error) {
	id, err := readServerID(dir)
	if err != nil || id != "" {
		return id, err
	}
	r := make([]byte, 8)
	rand.Read(r)
	if err := AdoptServerID(dir, "disk-"+hex.EncodeToString(r)); err != nil {
		return "", err
	}
	return readServerID(dir) // another process may have written its own first
}

// readServerID is dir's server id, "" if it has none yet.
func readServerID(dir string) (string, error) {
	const op = "diskserver.serverID"
	p := filepath.Join(dir, serverIDFile)
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", shoal.E(op, p, err)
	}
	id := strings.TrimSpace(string(b))
	if id == "" {
		return "", shoal.Errorf(op, shoal.KindInvalid, "%s is empty", p)
	}
	return id, nil
}

// AdoptServerID makes id dir's server id, durably, unless dir has one
// already (then it is kept). shoal all gives a disk replaced at the same
// path the id of the one it replaces: the catalog's rows then name a
// live, empty server whose objects repair rebuilds in place, not a
// ghost server at the new one's URL.
func AdoptServerID(dir, id string) error {
	const op = "diskserver.AdoptServerID"
	p := filepath.Join(dir, serverIDFile)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return shoal.E(op, p, err)
	}
	_, err = f.WriteString(id + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		return shoal.E(op, p, err)
	}
	return nil
}
