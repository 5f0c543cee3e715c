package remote

import (
	"crypto/tls"
	"net/http"
	"sync"

	"shoal/sign"
)

// NewTLS is New with the client config its https calls use (the cluster
// CA, see tlsconf.ClientConfig); nil is New: the system roots.
func NewTLS(baseURL string, keys *sign.Keys, cfg *tls.Config) *Client {
	c := New(baseURL, keys)
	if cfg != nil {
		c.TLS = cfg
		c.HTTP.TLSConfig = cfg
		c.wire.HTTP.TLSConfig = cfg
	}
	return c
}

// spanClients are the OpenRange clients of https data servers, one per
// client config (a process has one: the cluster CA), each a copy of
// spanHTTP's transport with that config.
var spanClients sync.Map // *tls.Config → *http.Client

// spanClient is the OpenRange client for a data server reached with cfg.
func spanClient(cfg *tls.Config) *http.Client {
	if cfg == nil {
		return spanHTTP
	}
	if c, ok := spanClients.Load(cfg); ok {
		return c.(*http.Client)
	}
	tr := spanHTTP.Transport.(*http.Transport).Clone()
	tr.TLSClientConfig = cfg
	c, _ := spanClients.LoadOrStore(cfg, &http.Client{Transport: tr})
	return c.(*http.Client)
}
