package diskserver

import (
	"encoding/json"
	"net"
	"sync"
	"testing"

	"github.com/valyala/fasthttp"

	"shoal/sign"
	"shoal/wire"
)

// mdPeer is a tiny real md on loopback: it verifies every signed internal
// call with wire.Verify, records what it got and answers as configured.
// It stands in for md, whose package is someone else's.
type mdPeer struct {
	URL string

	mu           sync.Mutex
	commitStatus int    // status to answer commits with (201 by default)
	commitReason string // body for an error status
	commits      []wire.CommitRequest
	heartbeats   []wire.Heartbeat
	garbage      []wire.GarbageItem // due garbage, handed out until acknowledged
	acked        []int64
	aborts       []string // uploads a data server said failed
	badSigs      int
}

func startMD(t *testing.T, keys *sign.Keys) *mdPeer {
	t.Helper()
	p := &mdPeer{commitStatus: 201}
	guard := wire.NewReplayGuard()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.URL = "http://" + ln.Addr().String()
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		if _, err := wire.ReadCall(ctx, keys, guard, 1<<20); err != nil {
			p.mu.Lock()
			p.badSigs++
			p.mu.Unlock()
			ctx.Error("bad signature", 403)
			return
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		switch string(ctx.Path()) {
		case wire.PathCommit:
			var c wire.CommitRequest
			if err := json.Unmarshal(ctx.Request.Body(), &c); err != nil {
				ctx.Error("bad json", 400)
				return
			}
			p.commits = append(p.commits, c)
			if p.commitStatus >= 300 {
				ctx.Error(p.commitReason, p.commitStatus)
				return
			}
			b, _ := json.Marshal(wire.CommitReply{Path: "/f", ETag: `"1-1"`, Created: p.commitStatus == 201})
			ctx.SetStatusCode(p.commitStatus)
			if p.commitStatus != 204 {
				ctx.SetBody(b)
			}
		case wire.PathHeartbeat:
			var hb wire.Heartbeat
			json.Unmarshal(ctx.Request.Body(), &hb)
			p.heartbeats = append(p.heartbeats, hb)
			ctx.SetStatusCode(204)
		case wire.PathAbort:
			var a wire.AbortRequest
			json.Unmarshal(ctx.Request.Body(), &a)
			p.aborts = append(p.aborts, a.Upload)
			ctx.SetStatusCode(204)
		case wire.PathGarbage:
			b, _ := json.Marshal(wire.GarbageReply{Items: p.garbage})
			ctx.SetBody(b)
		case wire.PathGarbageOK:
			var d wire.GarbageDone
			json.Unmarshal(ctx.Request.Body(), &d)
			p.acked = append(p.acked, d.IDs...)
			done := map[int64]bool{}
			for _, id := range d.IDs {
				done[id] = true
			}
			var left []wire.GarbageItem
			for _, g := range p.garbage {
				if !done[g.ID] {
					left = append(left, g)
				}
			}
			p.garbage = left
			ctx.SetStatusCode(204)
		default:
			ctx.Error("no such endpoint", 404)
		}
	}}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Shutdown() })
	return p
}

func (p *mdPeer) setCommit(status int, reason string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.commitStatus, p.commitReason = status, reason
}

func (p *mdPeer) snapshot() (commits []wire.CommitRequest, hbs []wire.Heartbeat, acked []int64, garbageLeft, badSigs int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]wire.CommitRequest(nil), p.commits...), append([]wire.Heartbeat(nil), p.heartbeats...),
		append([]int64(nil), p.acked...), len(p.garbage), p.badSigs
}

// aborted lists the uploads data servers reported as failed.
func (p *mdPeer) aborted() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.aborts...)
}
