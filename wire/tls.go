package wire

import (
	"net/http"
	"sync"
)

// streamClients are Stream's net/http clients for https md, one per TLS
// config (a process has one: the cluster CA).
var streamClients sync.Map // *tls.Config → *http.Client (crypto/tls)

// streamClient is the net/http client of Stream: it verifies md with the
// TLS config of c.HTTP (the fasthttp client of Call), so both calls trust
// the same CA; without one, http.DefaultClient (the system roots).
func (c *Client) streamClient() *http.Client {
	if c.HTTP == nil || c.HTTP.TLSConfig == nil {
		return http.DefaultClient
	}
	cfg := c.HTTP.TLSConfig
	if hc, ok := streamClients.Load(cfg); ok {
		return hc.(*http.Client)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = cfg
	hc, _ := streamClients.LoadOrStore(cfg, &http.Client{Transport: tr})
	return hc.(*http.Client)
}
