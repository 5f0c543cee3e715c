package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"path/filepath"

	"shoal/cmd/shoal/config"
	"shoal/tlsconf"
)

// allTLS is the TLS of shoal all: one certificate per port (nil: plain
// http) and the client configs of its internal calls.
type allTLS struct {
	md, internal, disk *serverCert
	// peer is how md reaches its data server (md.Options.PeerTLS); nil
	// without TLS.
	peer *tls.Config
	// toMD is how the data server reaches md's internal port.
	toMD *tls.Config
	// caFile, caPath: what clients trust (caPath only for the private CA).
	caFile, caPath string
	private        *tlsconf.PrivateCA // nil unless made or reused under DATA/tls
}

// setupAllTLS reads the tls.* keys for shoal all. TLS is on with all.tls
// or tls.md_cert_file; without tls.md_cert_file, md and the data server
// serve a certificate of a private CA made once under dataDir/tls for this
// host's names and addresses, and internal calls trust that CA.
// tls.disk_cert_file and tls.internal_cert_file give those ports their own.
func setupAllTLS(ctx context.Context, c *config.Config, log *slog.Logger, reloads *reloaders, dataDir string) (*allTLS, error) {
	t := &allTLS{}
	if !c.All.TLS && !c.TLS.MD().Set() {
		for _, p := range []config.CertPair{c.TLS.Internal(), c.TLS.Disk()} {
			if p.Set() {
				return nil, fmt.Errorf("%s: shoal all serves https only with all.tls (--tls) or tls.md_cert_file", p.CertKey)
			}
		}
		return t, nil
	}
	mdPair := c.TLS.MD()
	t.caFile = c.TLS.CAFile
	if !mdPair.Set() {
		hosts := localHosts([]string{c.MD.Listen, c.Disk.Listen}, []string{c.Disk.PublicURL})
		pc, err := tlsconf.EnsurePrivateCA(filepath.Join(dataDir, "tls"), hosts)
		if err != nil {
			return nil, fmt.Errorf("all.tls: private CA: %w", err)
		}
		t.private = pc
		mdPair.Cert, mdPair.Key, mdPair.CertKey = pc.CertFile, pc.KeyFile, "all.tls ("+pc.CertFile+")"
		if t.caFile == "" {
			t.caFile = pc.CAFile
		}
		t.caPath = pc.CAPath
		if pc.Created {
			log.Info("tls: made a private CA", "ca", pc.CAFile, "capath", pc.CAPath, "hosts", hosts)
		}
	}
	// A pair named twice (md's reused for a port) is loaded and watched once.
	loaded := map[string]*serverCert{}
	load := func(p config.CertPair) (*serverCert, error) {
		if !p.Set() {
			p.Cert, p.Key = mdPair.Cert, mdPair.Key
		}
		if sc := loaded[p.Cert+"\x00"+p.Key]; sc != nil {
			return sc, nil
		}
		sc, err := loadServerCert(ctx, c, log, reloads, p)
		if err == nil {
			loaded[p.Cert+"\x00"+p.Key] = sc
		}
		return sc, err
	}
	var err error
	if t.md, err = load(mdPair); err != nil {
		return nil, err
	}
	if t.disk, err = load(c.TLS.Disk()); err != nil {
		return nil, err
	}
	if t.internal, err = load(c.TLS.Internal()); err != nil {
		return nil, err
	}
	if t.peer, err = clientTLS(c, t.caFile); err != nil {
		return nil, err
	}
	t.toMD = loopbackClientTLS(t.peer, t.internal)
	return t, nil
}

// summary is the TLS lines of shoal all's ready banner ("" without TLS).
func (t *allTLS) summary() string {
	if t.md == nil {
		return ""
	}
	return tlsSummary(t.caFile, t.caPath, t.md.fingerprint())
}
