package md

import (
	"net"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/wire"
)

// DefaultProbeInterval is how often md checks that each live data server
// and gw answers, unless Options.ProbeInterval says otherwise.
const DefaultProbeInterval = 500 * time.Millisecond

// probeTimeout bounds one probe: a server that has not answered by then
// (hung, or its host gone) is suspect.
const probeTimeout = time.Second

// placementLoop reads the server list every PlacementRefresh, whether or
// not requests come, so that md's catalog clock sees an outage (and its
// end) when it happens, and the probes have a current list.
func (s *Server) placementLoop() {
	defer s.done.Done()
	t := time.NewTicker(PlacementRefresh)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.placement.refreshNow(s.base)
		}
	}
}

// probeLoop asks every live server that is not already suspect for its
// health every ProbeInterval, and marks suspect those that do not answer
// at all: a data server killed (or a gw) stops getting redirects within
// about one interval, where its heartbeat would take ServerTTL to age out.
// Any HTTP answer counts as alive: the probe asks whether the server can
// be reached, as a client redirected to it would, not how it feels.
func (s *Server) probeLoop() {
	defer s.done.Done()
	t := time.NewTicker(s.opts.ProbeInterval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.probeAll()
		}
	}
}

// probeAll probes the servers in parallel and waits for them all (each is
// bounded by probeTimeout).
func (s *Server) probeAll() {
	servers, _, err := s.placement.list(s.base)
	if err != nil {
		return
	}
	now := time.Now()
	var wg sync.WaitGroup
	for i := range servers {
		sv := &servers[i]
		if sv.State == shoal.ServerRetired || !s.placement.usable(sv, now) {
			continue
		}
		wg.Go(func() {
			if !s.probe(sv.URL) {
				s.placement.suspects.mark(sv)
			}
		})
	}
	wg.Wait()
}

// probe reports whether anything answers at base: false only when the
// connection is refused or nothing answers within probeTimeout. Any other
// outcome (an HTTP answer of any status, a TLS handshake this client
// cannot verify) means a server is there.
func (s *Server) probe(base string) bool {
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(strings.TrimRight(base, "/") + wire.PathHealthz)
	req.Header.SetMethod(fasthttp.MethodGet)
	return !unreachable(s.prober.DoTimeout(req, resp, probeTimeout))
}

// newProber is the HTTP client of the probes: its own small pool of
// keep-alive connections, so that a probe is one short request.
func newProber() *fasthttp.Client {
	return &fasthttp.Client{
		Name:                     "shoal-md-probe",
		NoDefaultUserAgentHeader: true,
		MaxConnsPerHost:          2,
		ReadTimeout:              probeTimeout,
		WriteTimeout:             probeTimeout,
		MaxResponseBodySize:      64 << 10,
		Dial: func(addr string) (c net.Conn, err error) {
			return fasthttp.DialTimeout(addr, probeTimeout)
		},
	}
}
