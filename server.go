package shoal

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ServerState is a data server's place in its life cycle.
type ServerState string

const (
	ServerActive   ServerState = "active"   // takes reads and writes
	ServerReadOnly ServerState = "readonly" // takes reads only
	ServerDraining ServerState = "draining" // data is being moved off; reads only
	ServerRetired  ServerState = "retired"  // holds nothing; ignored
)

// Server is a data server (diskserver or gw) as md knows it: registered by
// its heartbeat, chosen for writes by free space.
type Server struct {
	ID       string // stable, chosen by the server (from its config or data dir)
	URL      string // base URL clients are redirected to, e.g. http://10.0.0.5:8443
	Pool     string // pool it belongs to ("default" unless configured)
	State    ServerState
	Free     int64 // bytes free across its disks
	Total    int64 // bytes in all
	LastSeen time.Time
}

// Live reports whether the server heartbeated within ttl of now.
func (s *Server) Live(now time.Time, ttl time.Duration) bool {
	return now.Sub(s.LastSeen) <= ttl
}

// Pool is a named set of data servers with the layout new files in it get.
type Pool struct {
	Name   string
	Layout Layout
}

// LayoutKind says how a file's bytes are spread over data servers.
type LayoutKind uint8

const (
	LayoutReplica LayoutKind = iota // N full copies
	LayoutEC                        // K data + M parity shards (Reed-Solomon)
)

// Layout is a replication or erasure-coding scheme, written "replica:N" or
// "ec:K+M". The zero value is invalid; DefaultLayout is replica:1.
type Layout struct {
	Kind LayoutKind
	N    int // replicas, for LayoutReplica
	K, M int // data and parity shards, for LayoutEC
}

// DefaultLayout is one copy on one data server.
var DefaultLayout = Layout{Kind: LayoutReplica, N: 1}

// Width is the number of distinct servers the layout needs.
func (l Layout) Width() int {
	if l.Kind == LayoutEC {
		return l.K + l.M
	}
	return l.N
}

func (l Layout) String() string {
	if l.Kind == LayoutEC {
		return fmt.Sprintf("ec:%d+%d", l.K, l.M)
	}
	return fmt.Sprintf("replica:%d", l.N)
}

// IsZero reports whether l is the zero (unset) layout.
func (l Layout) IsZero() bool { return l == Layout{} }

// ParseLayout parses "replica:N" (1 ≤ N ≤ 16) or "ec:K+M" (1 ≤ K, 1 ≤ M,
// K+M ≤ 256).
func ParseLayout(s string) (Layout, error) {
	bad := func(why string) (Layout, error) {
		return Layout{}, Errorf("layout", KindInvalid, "%q: %s (want replica:N or ec:K+M)", s, why)
	}
	kind, arg, ok := strings.Cut(s, ":")
	if !ok {
		return bad("missing ':'")
	}
	switch kind {
	case "replica":
		n, err := strconv.Atoi(arg)
		if err != nil || n < 1 || n > 16 {
			return bad("N must be 1..16")
		}
		return Layout{Kind: LayoutReplica, N: n}, nil
	case "ec":
		ks, ms, ok := strings.Cut(arg, "+")
		if !ok {
			return bad("missing '+'")
		}
		k, err1 := strconv.Atoi(ks)
		m, err2 := strconv.Atoi(ms)
		if err1 != nil || err2 != nil || k < 1 || m < 1 || k+m > 256 {
			return bad("need K ≥ 1, M ≥ 1, K+M ≤ 256")
		}
		return Layout{Kind: LayoutEC, K: k, M: m}, nil
	}
	return bad("unknown kind " + strconv.Quote(kind))
}
