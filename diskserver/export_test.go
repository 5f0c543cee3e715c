package diskserver

import (
	"testing"

	"shoal/sign"
	"shoal/wire"
)

// MDPeer exposes the test md to diskserver_test (remote's upload test).
type MDPeer = mdPeer

func StartMD(t *testing.T, keys *sign.Keys) *MDPeer { return startMD(t, keys) }

func (p *mdPeer) SetCommit(status int, reason string) { p.setCommit(status, reason) }

func (p *mdPeer) Commits() []wire.CommitRequest {
	c, _, _, _, _ := p.snapshot()
	return c
}
