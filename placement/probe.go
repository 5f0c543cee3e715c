package placement

import (
	"context"
	"crypto/tls"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"shoal"
	"shoal/wire"
)

// DefaultProbeInterval is how often md checks that each live data server
// and gw answers, unless told otherwise (md's Options.ProbeInterval).
const DefaultProbeInterval = 500 * time.Millisecond

// probeTimeout bounds one probe: a server that has not answered by then
// (hung, or its host gone) is suspect.
const probeTimeout = time.Second

// ProbeLoop asks every live server that is not already suspect for its
// health every interval until stop is closed, and marks suspect those that
// do not answer at all: a data server killed (or a gw) stops getting
// redirects within about one interval, where its heartbeat would take the
// server TTL to age out. Any HTTP answer counts as alive: the probe asks
// whether the server can be reached, as a client redirected to it would,
// not how it feels.
func (p *View) ProbeLoop(ctx context.Context, stop <-chan struct{}, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			p.probeAll(ctx)
		}
	}
}

// probeAll probes the servers in parallel and waits for them all (each is
// bounded by probeTimeout).
func (p *View) probeAll(ctx context.Context) {
	servers, _, err := p.List(ctx)
	if err != nil {
		return
	}
	now := time.Now()
	var wg sync.WaitGroup
	for i := range servers {
		sv := &servers[i]
		if sv.State == shoal.ServerRetired || !p.usable(sv, now) {
			continue
		}
		wg.Go(func() {
			if !p.prober.probe(sv.URL) {
				p.suspects.mark(sv)
			}
		})
	}
	wg.Wait()
}

// prober is the HTTP client of the probes: its own small pool of
// keep-alive connections, so that a probe is one short request.
type prober struct{ c *fasthttp.Client }

func newProber(cfg *tls.Config) *prober {
	return &prober{&fasthttp.Client{
		Name:                     "shoal-md-probe",
		NoDefaultUserAgentHeader: true,
		MaxConnsPerHost:          2,
		ReadTimeout:              probeTimeout,
		WriteTimeout:             probeTimeout,
		MaxResponseBodySize:      64 << 10,
		Dial: func(addr string) (c net.Conn, err error) {
			return fasthttp.DialTimeout(addr, probeTimeout)
		},
		TLSConfig: cfg,
	}}
}

// probe reports whether anything answers at base: false only when the
// connection is refused or nothing answers within probeTimeout. Any other
// outcome (an HTTP answer of any status, a TLS handshake this client
// cannot verify) means a server is there.
func (p *prober) probe(base string) bool {
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(strings.TrimRight(base, "/") + wire.PathHealthz)
	req.Header.SetMethod(fasthttp.MethodGet)
	return !Unreachable(p.c.DoTimeout(req, resp, probeTimeout))
}
