package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"shoal/cmd/shoal/config"
	"shoal/diskserver"
	"shoal/internal/atomicfile"
)

// serverIDs is what shoal all keeps in its first data directory, beside
// the catalog whose rows name them: the server id of each of its data
// directories and of its gw. A disk replaced at the same path (README,
// "A small site on one box") then comes back as the same data server,
// empty, whose objects repair rebuilds in place; with an id of its own it
// came back as a new server at the old one's URL, beside a ghost that
// still held the catalog's rows and passed the new one's health checks.
// The gw, on a free port at each start, stays one server instead of
// leaving one more that never answers again at every restart.
type serverIDs struct {
	file  string
	Disks map[string]string `json:"disks"` // absolute disk directory → id
	GW    string            `json:"gw,omitempty"`
}

const serverIDsFile = "server-ids.json"

// keepServerIDs gives shoal all's data directories (unless disk.id names
// the first) and its gw (unless gw.id names it) the ids recorded in dir.
func keepServerIDs(c *config.Config, dir string, extraDirs []string) error {
	ids, err := loadServerIDs(dir)
	if err != nil {
		return err
	}
	dirs := extraDirs
	if c.Disk.ID == "" {
		dirs = append([]string{c.Disk.Data[0]}, extraDirs...)
	}
	for _, d := range dirs {
		if err := ids.disk(d); err != nil {
			return fmt.Errorf("all.data: %w", err)
		}
	}
	if c.GW.ID == "" && (len(extraDirs) > 0 || c.GW.Listen != "") {
		c.GW.ID = ids.gw()
	}
	return ids.save()
}

// loadServerIDs reads dir's record, empty if it has none yet.
func loadServerIDs(dir string) (*serverIDs, error) {
	s := &serverIDs{file: filepath.Join(dir, serverIDsFile), Disks: map[string]string{}}
	b, err := os.ReadFile(s.file)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err == nil {
		err = json.Unmarshal(b, s)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.file, err)
	}
	if s.Disks == nil {
		s.Disks = map[string]string{}
	}
	return s, nil
}

// disk gives the disk directory dir the id recorded for it when it has
// none (a new disk at that path), and records the id it has.
func (s *serverIDs) disk(dir string) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if id := s.Disks[dir]; id != "" {
		if err := diskserver.AdoptServerID(dir, id); err != nil {
			return err
		}
	}
	id, err := diskserver.ServerID(dir)
	if err == nil {
		s.Disks[dir] = id
	}
	return err
}

// gw is the id of shoal all's gw, made once.
func (s *serverIDs) gw() string {
	if s.GW == "" {
		r := make([]byte, 8)
		rand.Read(r)
		s.GW = "gw-" + hex.EncodeToString(r)
	}
	return s.GW
}

// save writes the record durably (atomicfile).
func (s *serverIDs) save() error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(s.file, append(b, '\n'), 0o600)
}
