package bench

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// Op is the kind of operation a workload performs.
type Op int

const (
	OpStat     Op = iota // HEAD or PROPFIND Depth 0 on existing paths
	OpList               // PROPFIND Depth 1 on directories
	OpGet                // GET of objects written at setup (or given paths)
	OpPut                // PUT overwriting a few objects per connection
	OpMix                // GET with probability GetRatio, else PUT, on the same objects
	OpCreate             // PUT of new, unique files: files created per second
	OpPopulate           // PUT of the populate layout, file i of N once each
)

// Spec describes a workload. Paths are relative to the target's base URL.
type Spec struct {
	Name     string // label in reports
	Op       Op
	Method   string   // OpStat: "HEAD" (default) or "PROPFIND"
	Size     int64    // body size for writes, expected size for reads
	Paths    []string // paths read by stat, list, get and mix; cycled
	GetRatio float64  // OpMix: fraction of GETs (default 0.9)
	Dir      string   // where writes go (put, mix, files, populate); created at setup
	Objects  int      // get and mix: objects written at setup when Paths is empty (default 8)
	Body     []byte   // stat with PROPFIND and list: the request body (nil: none, which means allprop)
}

// Layout is the shape populate creates and stat/list read back: Files
// files spread round-robin over Dirs directories under Prefix.
type Layout struct {
	Prefix string
	Files  int
	Dirs   int
}

// DefaultLayout is what populate creates and stat reads without flags.
var DefaultLayout = Layout{Prefix: "/bench/tree", Files: 10000, Dirs: 100}

// DirPath is the path of directory d.
func (l Layout) DirPath(d int) string {
	return fmt.Sprintf("%s/d%04d", strings.TrimRight(l.Prefix, "/"), d)
}

// FilePath is the path of file i: in directory i mod Dirs.
func (l Layout) FilePath(i int) string {
	return fmt.Sprintf("%s/f%07d", l.DirPath(i%l.dirs()), i)
}

func (l Layout) dirs() int {
	if l.Dirs < 1 {
		return 1
	}
	return l.Dirs
}

// FilePaths lists every file of the layout.
func (l Layout) FilePaths() []string {
	out := make([]string, l.Files)
	for i := range out {
		out[i] = l.FilePath(i)
	}
	return out
}

// DirPaths lists every directory of the layout, with a trailing slash as
// WebDAV collections are addressed.
func (l Layout) DirPaths() []string {
	out := make([]string, l.dirs())
	for i := range out {
		out[i] = l.DirPath(i) + "/"
	}
	return out
}

// ParseSize reads sizes such as 0, 512, 1k, 16k, 1m, 128m, 1g (powers of 1024).
func ParseSize(s string) (int64, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.TrimSuffix(strings.TrimSuffix(s, "ib"), "b")
	mult := int64(1)
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 'k':
			mult, s = 1<<10, s[:n-1]
		case 'm':
			mult, s = 1<<20, s[:n-1]
		case 'g':
			mult, s = 1<<30, s[:n-1]
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return v * mult, nil
}

// ParseSizes reads a comma-separated list of sizes.
func ParseSizes(s string) ([]int64, error) {
	var out []int64
	for _, f := range strings.Split(s, ",") {
		if strings.TrimSpace(f) == "" {
			continue
		}
		v, err := ParseSize(f)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// FormatSize writes a size the way ParseSize reads it: 1k, 16m, 1000.
func FormatSize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + "g"
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + "m"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + "k"
	}
	return strconv.FormatInt(n, 10)
}

// escapePath percent-encodes a path for a request line.
func escapePath(p string) string {
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return (&url.URL{Path: p}).EscapedPath()
}
