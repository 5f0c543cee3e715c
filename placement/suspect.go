package placement

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"

	"shoal"
)

// suspects are the servers md's own requests (a probe, a proxied GET or
// PUT) could not reach. A suspect server gets no writes, and reads go to
// it only when no other replica (or gw) is left, until it heartbeats
// again: heartbeats travel through the catalog, so every md replica sees
// them, whichever md marked the server.
//
// "Heartbeats again" is judged by the server's LastSeen changing from the
// value md knew when it marked it, not by comparing LastSeen with md's
// clock: LastSeen is stamped by whichever md took the heartbeat, whose
// clock may differ from this one's.
type suspects struct {
	n  atomic.Int32 // len(at): the common case, none, takes no lock
	mu sync.Mutex
	at map[string]time.Time // server id → its LastSeen when marked
}

// mark makes sv suspect until its LastSeen moves past the current one.
func (s *suspects) mark(sv *shoal.Server) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.at == nil {
		s.at = map[string]time.Time{}
	}
	if _, ok := s.at[sv.ID]; !ok {
		s.n.Add(1)
	}
	s.at[sv.ID] = sv.LastSeen
}

// is reports whether sv is suspect, forgetting the mark once sv has
// heartbeated since.
func (s *suspects) is(sv *shoal.Server) bool {
	if s.n.Load() == 0 {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	seen, ok := s.at[sv.ID]
	if !ok {
		return false
	}
	if sv.LastSeen.After(seen) {
		s.drop(sv.ID)
		return false
	}
	return true
}

// clear forgets id's mark (md took a heartbeat of it).
func (s *suspects) clear(id string) {
	if s.n.Load() == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drop(id)
}

func (s *suspects) drop(id string) {
	if _, ok := s.at[id]; ok {
		delete(s.at, id)
		s.n.Add(-1)
	}
}

// Unreachable reports whether err, of a request md made to a server with
// fasthttp, says that nothing answered at the server's address: the
// connection was refused or could not be made in time, or the request
// timed out. Then md marks the server suspect (MarkSuspect). An error in
// the middle of a body (the client went away, say) says nothing about
// the server.
func Unreachable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, fasthttp.ErrDialTimeout) || errors.Is(err, fasthttp.ErrTimeout) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH) {
		return true
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}
