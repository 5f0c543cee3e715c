package config

import (
	"fmt"
	"net/netip"
	"strings"
	"time"
)

// TPCConfig is third-party copy (WLCG HTTP-TPC): the outbound side of md,
// data servers and gws.
type TPCConfig struct {
	AllowLocal       bool          `mapstructure:"allow_local" doc:"let third-party copies reach loopback, link-local and this host's addresses and shoal's own servers (tests and labs only: off, a COPY cannot make shoal fetch its internal URLs)"`
	Deny             []string      `mapstructure:"deny" doc:"addresses and CIDR prefixes third-party copies never reach, even with allow_local (e.g. the cluster's internal network)"`
	LocalURLs        []string      `mapstructure:"local_urls" doc:"URLs and host names clients reach md by, beside its listen address, auth.audiences and md.allowed_hosts: a COPY whose Destination names one is a plain WebDAV COPY, any other host a third-party push"`
	CAFile           string        `mapstructure:"ca_file" doc:"PEM bundle of CAs trusted, beside the system's roots, for https peers of third-party copies (grid CAs)"`
	CADir            string        `mapstructure:"ca_dir" doc:"directory of CA certificates (*.pem, *.crt, OpenSSL-hashed HASH.0, HASH.1, …, e.g. /etc/grid-security/certificates) trusted for https peers of third-party copies"`
	MarkerInterval   time.Duration `mapstructure:"marker_interval" doc:"interval between the performance markers of a third-party copy's 202 stream"`
	ConnectTimeout   time.Duration `mapstructure:"connect_timeout" doc:"a third-party copy fails when its peer does not take a connection (TLS handshake included) within this"`
	FirstByteTimeout time.Duration `mapstructure:"first_byte_timeout" doc:"a third-party copy fails when its peer does not start answering a request within this"`
	IdleTimeout      time.Duration `mapstructure:"idle_timeout" doc:"a third-party copy fails when its body moves no byte for this long (no limit on its total length)"`
}

// TPCDefaults are the tpc section's defaults.
func TPCDefaults() TPCConfig {
	return TPCConfig{
		MarkerInterval:   5 * time.Second,
		ConnectTimeout:   60 * time.Second,
		FirstByteTimeout: 120 * time.Second,
		IdleTimeout:      60 * time.Second,
	}
}

func (t *TPCConfig) validate() error {
	for key, d := range map[string]time.Duration{
		"tpc.marker_interval": t.MarkerInterval, "tpc.connect_timeout": t.ConnectTimeout,
		"tpc.first_byte_timeout": t.FirstByteTimeout, "tpc.idle_timeout": t.IdleTimeout,
	} {
		if d <= 0 {
			return fmt.Errorf("%s: %v must be positive", key, d)
		}
	}
	for i, d := range t.Deny {
		d = strings.TrimSpace(d)
		if _, err := netip.ParsePrefix(d); err == nil {
			continue
		}
		if _, err := netip.ParseAddr(d); err != nil {
			return fmt.Errorf("tpc.deny[%d]: %q is neither an address nor a CIDR prefix", i, d)
		}
	}
	for i, u := range t.LocalURLs {
		if strings.TrimSpace(u) == "" {
			return fmt.Errorf("tpc.local_urls[%d]: empty", i)
		}
	}
	return nil
}
